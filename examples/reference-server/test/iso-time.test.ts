import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoTime } from '../src/iso-time';

describe('isoTime', () => {
  it('is toISOString for every date, years 0 to 9999 computed and the rest passed through', () => {
    const fourDigitYears = fc
      .integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 })
      .map((t) => new Date(t));
    fc.assert(
      fc.property(fc.oneof(fourDigitYears, fc.date({ noInvalidDate: true })), (date) => {
        expect(isoTime(date)).toBe(date.toISOString());
      }),
      { numRuns: 20_000 },
    );
    for (const t of [
      -62_167_219_200_001, -62_167_219_200_000, -1, 0, 951_782_400_000, 253_402_300_799_999,
      253_402_300_800_000,
    ]) {
      expect(isoTime(new Date(t))).toBe(new Date(t).toISOString());
    }
  });

  it('throws as toISOString does for an invalid date', () => {
    expect(() => isoTime(new Date(Number.NaN))).toThrow(RangeError);
  });
});
