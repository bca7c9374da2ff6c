import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonBodyGuard } from '../src/json-body';
import { underflowingNumber } from '../src/numbers';

// A number literal that is not zero but reads as 0 (`$lte: 1e-400` was stored as 0) is refused:
// what a service stores must be what the client wrote. Anything else is left as it was.

const guard = jsonBodyGuard();
const parse = (text: string) => guard.parse(new TextEncoder().encode(text), 'application/json');

describe('underflowingNumber', () => {
  it.each([
    ['1e-400', '{"a":1e-400}'],
    ['-1e-400', '[-1e-400]'],
    ['2.4e-324', '{"a":{"$lte":2.4e-324}}'],
    ['0.5e-400', '[0.5e-400]'],
    ['400 zeros then 1', `[0.${'0'.repeat(400)}1]`],
    ['after a string that looks like one', '{"s":"1e-400 \\" 2","n":1E-00400}'],
  ])('finds %s', (_name, text) => {
    expect(underflowingNumber(text)).toBeDefined();
    expect(() => parse(text)).toThrow(expect.objectContaining({ code: 'validation_failed', status: 400 }));
  });

  it.each([
    ['0e-400: zero written as zero', '[0e-400, -0.0e999, 0.000]'],
    ['the smallest double', '[5e-324, 4.9406564584124654e-324]'],
    ['inside a string', '{"a":"1e-400","b":"0.00000000000000000000000001"}'],
    ['a key', '{"1e-400":1}'],
    ['1e400 (Infinity: the schema refuses it, naming the field)', '[1e400]'],
    ['ordinary numbers', '[1, -2.5, 1e21, 1e-300, 123456789012345678901234567890]'],
  ])('leaves %s alone', (_name, text) => {
    expect(underflowingNumber(text)).toBeUndefined();
    expect(() => parse(text)).not.toThrow();
  });

  it('finds exactly the non-zero literals that read as 0, wherever they are', () => {
    const literal = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
      fc
        .tuple(
          fc.integer({ min: 0, max: 9 }),
          fc.integer({ min: 0, max: 9 }),
          fc.integer({ min: 1, max: 1000 }),
        )
        .map(([a, b, e]) => `${a}.${b}e-${e}`),
    );
    fc.assert(
      fc.property(fc.array(literal, { minLength: 1, maxLength: 5 }), fc.string(), (literals, text) => {
        const source = JSON.stringify({ text, values: '@' }).replace('"@"', `[${literals.join(',')}]`);
        const expected = literals.find((l) => Number(l) === 0 && /[1-9]/.test(l.split(/e/i)[0] ?? ''));
        expect(underflowingNumber(source)).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });
});
