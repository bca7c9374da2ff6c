import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyAttempt, parseRetryAfter } from '../src/classify';
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule, retryDelay } from '../src/schedule';

describe('retry schedule', () => {
  it('is 1m, 5m, 30m, 2h, 6h, 24h by default (SPEC section 8)', () => {
    expect(DEFAULT_RETRY_SCHEDULE).toEqual([60e3, 300e3, 1800e3, 7200e3, 21600e3, 86400e3]);
  });

  it('parses overrides: n delays, n retries', () => {
    expect(parseRetrySchedule('1s,2s')).toEqual([1000, 2000]);
    expect(parseRetrySchedule('500ms, 1m,2h,1d')).toEqual([500, 60000, 7200000, 86400000]);
    expect(() => parseRetrySchedule('1x')).toThrow(RangeError);
    expect(() => parseRetrySchedule('')).toThrow(RangeError);
  });

  it('jitters every delay within ±10% and ends after the last', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (retry, r) => {
          const base = DEFAULT_RETRY_SCHEDULE[retry - 1] ?? 0;
          const delay = retryDelay(DEFAULT_RETRY_SCHEDULE, retry, () => r) ?? -1;
          expect(delay).toBeGreaterThanOrEqual(Math.floor(base * 0.9));
          expect(delay).toBeLessThanOrEqual(Math.ceil(base * 1.1));
        },
      ),
    );
    expect(retryDelay(DEFAULT_RETRY_SCHEDULE, 7)).toBeUndefined();
  });

  it('lets a longer Retry-After win, never a shorter one', () => {
    expect(retryDelay([1000], 1, () => 0.5, 60_000)).toBe(60_000);
    expect(retryDelay([60_000], 1, () => 0.5, 1000)).toBe(60_000);
    expect(parseRetryAfter('120', 0)).toBe(120_000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 0)).toBe(10_000);
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
  });
});

describe('classifyAttempt', () => {
  it.each([
    [200, 'succeeded'],
    [204, 'succeeded'],
    [299, 'succeeded'],
    [301, 'dead'],
    [302, 'dead'],
    [307, 'dead'],
    [400, 'dead'],
    [401, 'dead'],
    [404, 'dead'],
    [408, 'retry'],
    [410, 'gone'],
    [422, 'dead'],
    [429, 'retry'],
    [500, 'retry'],
    [503, 'retry'],
    [undefined, 'retry'],
  ] as const)('%s -> %s', (status, outcome) => {
    expect(classifyAttempt(status)).toBe(outcome);
  });
});
