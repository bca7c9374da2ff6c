import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { iso } from '../src/routes/fields';

describe('iso', () => {
  it('property: equals Date.prototype.toISOString for every representable instant', () => {
    fc.assert(
      fc.property(fc.date({ noInvalidDate: true }), (date) => {
        expect(iso(date)).toBe(date.toISOString());
      }),
      { numRuns: 20_000 },
    );
  });

  it('property: equals toISOString around day, month, leap-year and era edges', () => {
    const edges = [
      Date.UTC(1970, 0, 1),
      Date.UTC(2000, 1, 29),
      Date.UTC(2024, 1, 29),
      Date.UTC(2100, 2, 1),
      Date.UTC(1900, 1, 28),
      Date.UTC(1600, 1, 29),
      Date.UTC(0, 0, 1) - 1,
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...edges),
        fc.integer({ min: -172_800_000, max: 172_800_000 }),
        (edge, delta) => {
          const date = new Date(edge + delta);
          expect(iso(date)).toBe(date.toISOString());
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it('throws for an invalid date, as toISOString does', () => {
    expect(() => iso(new Date(Number.NaN))).toThrow(RangeError);
  });
});
