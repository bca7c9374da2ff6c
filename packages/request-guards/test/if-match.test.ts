import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ifMatchHolds, parseIfMatch } from '../src/index';

// The reference: RFC 9110's ABNF written as regular expressions. If-Match = "*" / #entity-tag,
// entity-tag = [ %s"W/" ] DQUOTE *etagc DQUOTE, etagc = %x21 / %x23-7E / obs-text, and the list
// rule of section 5.6.1.2: [ element ] *( OWS "," OWS [ element ] ).
const ETAG = String.raw`(?:W/)?"[\x21\x23-\x7e\x80-\xff]*"`;
const LIST = new RegExp(String.raw`^[ \t]*(?:${ETAG})?(?:[ \t]*,[ \t]*(?:${ETAG})?)*[ \t]*$`);
const STAR = /^[ \t]*\*[ \t]*$/;

/** What the reference says: `invalid`, or whether `current` is matched by strong comparison. */
function reference(value: string, current: string): 'invalid' | boolean {
  if (STAR.test(value)) return true;
  if (!LIST.test(value)) return 'invalid';
  const tags = value.match(new RegExp(ETAG, 'g')) ?? [];
  return tags.some((tag) => !tag.startsWith('W/') && tag === current);
}

function ours(value: string, current: string): 'invalid' | boolean {
  const parsed = parseIfMatch(value);
  return parsed === undefined ? 'invalid' : ifMatchHolds(parsed, current);
}

const CURRENT = '"7"';

describe('If-Match (RFC 9110 section 13.1.1)', () => {
  it.each([
    ['"7"', true],
    ['*', true],
    [' * ', true],
    ['"1", "7"', true],
    ['"1","7"', true],
    ['"1" ,\t"7"', true],
    ['"1", , "7"', true],
    [', "7",', true],
    ['W/"7"', false],
    ['"1", W/"7"', false],
    ['"70"', false],
    ['""', false],
    ['', false],
    [',', false],
  ])('%j holds for "7": %s', (value, holds) => {
    expect(ours(value, CURRENT)).toBe(holds);
  });

  it.each(['"zzz", *', '*, "7"', '**', '*,', '7', '"7" "8"', '"7', 'w/"7"', 'W/ "7"', '"a"b"', '"sp ace"'])(
    '%j is outside the grammar',
    (value) => {
      expect(ours(value, CURRENT)).toBe('invalid');
    },
  );

  it('property: agrees with the ABNF reference on generated values', () => {
    const piece = fc.constantFrom(
      '"7"',
      '"1"',
      'W/"7"',
      'W/"x"',
      '""',
      '*',
      ',',
      ' ',
      '\t',
      '"',
      'W',
      '/',
      'w/',
      'a',
      '\x7f',
      '\u00e9',
      '\\',
    );
    const value = fc.oneof(
      fc.array(piece, { maxLength: 12 }).map((parts) => parts.join('')),
      fc.string({ maxLength: 16 }),
    );
    fc.assert(
      fc.property(value, fc.constantFrom('"7"', '"1"', '""'), (header, current) => {
        expect(ours(header, current)).toBe(reference(header, current));
      }),
      {
        numRuns: 2000,
        examples: [
          ['"zzz", *', '"7"'],
          ['W/"7", "7"', '"7"'],
        ],
      },
    );
  });
});
