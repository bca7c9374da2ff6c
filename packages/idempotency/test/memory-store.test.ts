import { describe, expect, it } from 'vitest';
import { MIN_RETENTION_MS, memoryIdempotencyStore, schedulePurge } from '../src/index';
import { resolveIdempotencyOptions } from '../src/options';
import { storeBehaviour } from './store-suite';

storeBehaviour('MemoryIdempotencyStore', () => memoryIdempotencyStore());

describe('options and the purge schedule', () => {
  it('refuses a retention under 24 h, a bad lease and unsafe stored headers', () => {
    expect(resolveIdempotencyOptions().retentionMs).toBe(MIN_RETENTION_MS);
    expect(resolveIdempotencyOptions({ retentionMs: 7 * MIN_RETENTION_MS }).retentionMs).toBe(
      7 * MIN_RETENTION_MS,
    );
    expect(() => resolveIdempotencyOptions({ retentionMs: MIN_RETENTION_MS - 1 })).toThrow(RangeError);
    expect(() => resolveIdempotencyOptions({ leaseMs: 0 })).toThrow(RangeError);
    expect(() => resolveIdempotencyOptions({ storedHeaders: ['Location', 'Set-Cookie'] })).toThrow(TypeError);
    expect(() => resolveIdempotencyOptions({ storedHeaders: ['request-id'] })).toThrow(TypeError);
  });

  it('purges on a schedule and stops cleanly', async () => {
    let purges = 0;
    const store = memoryIdempotencyStore();
    const purger = schedulePurge(
      {
        claim: (input) => store.claim(input),
        complete: (held, response, expiresAt) => store.complete(held, response, expiresAt),
        extend: (held, lockedUntil) => store.extend(held, lockedUntil),
        release: (held) => store.release(held),
        purge: async (options) => {
          purges += 1;
          return store.purge(options);
        },
      },
      { intervalMs: 5 },
    );
    await new Promise((resolve) => setTimeout(resolve, 40));
    await purger.stop();
    const after = purges;
    expect(after).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(purges).toBe(after);
  });
});
