import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { statementName } from '../src/index';

describe('statementName', () => {
  it('is hf_ and 32 hex digits, the same for the same text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const name = statementName(text);
        expect(name).toMatch(/^hf_[0-9a-f]{32}$/);
        expect(statementName(text)).toBe(name);
      }),
    );
  });

  it('gives distinct texts distinct names', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ unit: 'binary' }), { minLength: 2, maxLength: 200 }),
        (texts) => {
          expect(new Set(texts.map(statementName)).size).toBe(texts.length);
        },
      ),
    );
    // Texts that differ in one character, as generated statements do.
    const texts = Array.from({ length: 10_000 }, (_, i) => `select $1::int + ${i}`);
    expect(new Set(texts.map(statementName)).size).toBe(texts.length);
  });
});
