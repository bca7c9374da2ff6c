import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseIdempotencyKey } from '../src/key';

describe('parseIdempotencyKey', () => {
  // The IETF draft "The Idempotency-Key HTTP Header Field", section 2.1, writes the key as an
  // sf-string: Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324".
  it.each([
    ['"8e03978e-40d5-43e8-bc93-6894a57f9324"', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['8e03978e-40d5-43e8-bc93-6894a57f9324', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['  order-42  ', 'order-42'],
    ['"with space"', 'with space'],
    ['"esc\\"aped\\\\"', 'esc"aped\\'],
    ['a+b/c=', 'a+b/c='],
  ])('reads %s as %s', (header, key) => {
    expect(parseIdempotencyKey(header)).toEqual({ ok: true, key });
  });

  it.each([
    ['', 'blank'],
    ['""', 'blank'],
    ['  ', 'blank'],
    ['\t', 'blank'],
    ['"  "', 'blank'],
    ['  " "  ', 'blank'],
    ['a b', 'invalid'],
    ['a,b', 'invalid'],
    ['"open', 'invalid'],
    ['"bad \\n escape"', 'invalid'],
    ['"x";param=1', 'invalid'],
    ['ключ', 'invalid'],
    ['x'.repeat(256), 'too_long'],
  ])('refuses %j with 400 validation_failed (%s)', (header, code) => {
    const result = parseIdempotencyKey(header);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect([result.error.status, result.error.code, result.error.errors[0]?.code]).toEqual([
      400,
      'validation_failed',
      code,
    ]);
  });

  it('property: a key of whitespace only, bare or quoted, is 400 validation_failed (blank)', () => {
    const blank = fc.string({ unit: fc.constantFrom(' ', '\t'), maxLength: 40 });
    fc.assert(
      fc.property(blank, fc.boolean(), fc.boolean(), (spaces, quoted, required) => {
        // Tabs are not sf-string characters: a quoted tab is malformed rather than blank.
        const header = quoted ? `"${spaces.replaceAll('\t', ' ')}"` : spaces;
        const result = parseIdempotencyKey(header, { required });
        expect(result.ok).toBe(false);
        if (result.ok) return;
        expect([result.error.status, result.error.code]).toEqual([400, 'validation_failed']);
        expect(result.error.errors[0]).toMatchObject({ field: 'Idempotency-Key', code: 'blank' });
      }),
    );
  });

  it('answers idempotency_key_required only when required', () => {
    expect(parseIdempotencyKey(undefined)).toEqual({ ok: true, key: undefined });
    const missing = parseIdempotencyKey(null, { required: true });
    expect(missing.ok ? null : missing.error.code).toBe('idempotency_key_required');
  });

  it('property: a key and its Structured Field string name the same key, up to 255 characters', () => {
    const printable = fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      minLength: 1,
      maxLength: 300,
    });
    fc.assert(
      fc.property(printable, (key) => {
        const quoted = `"${key.replace(/[\\"]/g, '\\$&')}"`;
        const result = parseIdempotencyKey(quoted);
        if (key.length > 255 || key.trim() === '') expect(result.ok).toBe(false);
        else expect(result).toEqual({ ok: true, key });
        // Sent bare, the same text is the key itself, trimmed; unless it opens with a DQUOTE,
        // when it is read as a Structured Field string, whose serialization is unique.
        const bare = parseIdempotencyKey(key);
        if (bare.ok && key.length <= 255) {
          const trimmed = key.trim();
          if (trimmed.startsWith('"')) {
            expect(`"${(bare.key ?? '').replace(/[\\"]/g, '\\$&')}"`).toBe(trimmed);
          } else {
            expect(bare.key).toBe(trimmed);
          }
        }
      }),
      // Bare texts that are themselves Structured Field strings, which random strings rarely are.
      { examples: [['" "'], ['"a\\"b"'], ['  "k"  '], ['"unterminated']] },
    );
  });
});
