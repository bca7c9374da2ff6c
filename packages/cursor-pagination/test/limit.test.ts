import { isProblemError } from '@holdfast/problem-details';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseInclude } from '../src/include';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../src/index';
import { clampLimit } from '../src/limit';

describe('clampLimit (SPEC section 4, limit handling)', () => {
  it.each([
    // missing, non-numeric or zero: 20
    [undefined, 20],
    [null, 20],
    ['', 20],
    ['abc', 20],
    ['12abc', 20],
    [' 5', 20],
    ['1e3', 20],
    ['0x10', 20],
    ['Infinity', 20],
    ['NaN', 20],
    ['0', 20],
    ['-0', 20],
    ['0.0', 20],
    ['000', 20],
    [0, 20],
    [Number.NaN, 20],
    // below 1: 1
    ['-1', 1],
    ['-100000', 1],
    ['0.5', 1],
    [-3, 1],
    [Number.NEGATIVE_INFINITY, 1],
    // above 100: 100 (clamped, not rejected)
    ['101', 100],
    ['500', 100],
    ['99999999999999999999999', 100],
    [1000, 100],
    [Number.POSITIVE_INFINITY, 100],
    // in range
    ['1', 1],
    ['+7', 7],
    ['020', 20],
    ['42', 42],
    ['100', 100],
    ['2.9', 2],
    [55, 55],
  ])('%j gives %i', (raw, expected) => {
    expect(clampLimit(raw)).toBe(expected);
  });

  it('property: always an integer from 1 to 100, never a throw', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.double(), fc.integer(), fc.constant(undefined)), (raw) => {
        const limit = clampLimit(raw);
        expect(Number.isInteger(limit)).toBe(true);
        expect(limit).toBeGreaterThanOrEqual(1);
        expect(limit).toBeLessThanOrEqual(MAX_LIMIT);
      }),
      { numRuns: 1000 },
    );
  });

  it('property: every integer from 1 to 100 is taken as is', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100 }), (n) => {
        expect(clampLimit(String(n))).toBe(n);
      }),
    );
    expect(DEFAULT_LIMIT).toBe(20);
  });
});

describe('parseInclude (pagination rule 6)', () => {
  it.each([
    [undefined, false],
    [null, false],
    ['total', true],
    ['total,total', true],
  ])('%j gives total=%s', (raw, total) => {
    expect(parseInclude(raw)).toEqual({ total });
  });

  it.each(['', 'totals', 'Total', 'total,', 'count'])('%j is 400 validation_failed naming include', (raw) => {
    try {
      parseInclude(raw);
      expect.unreachable();
    } catch (error) {
      expect(isProblemError(error) && error.status).toBe(400);
      expect(isProblemError(error) && error.code).toBe('validation_failed');
      expect(isProblemError(error) && error.errors[0]?.field).toBe('include');
    }
  });
});
