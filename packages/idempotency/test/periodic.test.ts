import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryIdempotencyStore, schedulePurge } from '../src/index';
import { keepLease } from '../src/lease';
import type { IdempotencyStore } from '../src/store';

// Housekeeping that cannot pile up: a purge or a lease renewal still running when the next is
// due skips that tick (before, purges queued one behind another without bound). Fake timers,
// runs held on promises the test controls: counts, never durations.

afterEach(() => {
  vi.useRealTimers();
});

/** A memory store whose `purge` and `extend` calls are counted and held until released. */
function heldStore() {
  const store = memoryIdempotencyStore();
  const waiting: (() => void)[] = [];
  const counts = { purge: 0, extend: 0 };
  const hold = () => new Promise<void>((resolve) => waiting.push(resolve));
  const held: IdempotencyStore = {
    claim: (input) => store.claim(input),
    complete: (key, response, expiresAt) => store.complete(key, response, expiresAt),
    release: (key) => store.release(key),
    async extend(key, lockedUntil) {
      counts.extend += 1;
      await hold();
      return store.extend(key, lockedUntil);
    },
    async purge(options) {
      counts.purge += 1;
      await hold();
      return store.purge(options);
    },
  };
  return {
    store: held,
    counts,
    release: () => {
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

describe('schedulePurge', () => {
  it('does not start a purge while the last one is held, and purges again on the tick after it ends', async () => {
    vi.useFakeTimers();
    const { store, counts, release } = heldStore();
    const purger = schedulePurge(store, { intervalMs: 1000 });
    await vi.advanceTimersByTimeAsync(1000);
    expect(counts.purge).toBe(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(counts.purge).toBe(1);
    release();
    await vi.advanceTimersByTimeAsync(1000);
    expect(counts.purge).toBe(2);
    const stopped = purger.stop();
    release();
    await stopped;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(counts.purge).toBe(2);
  });

  it('reports a failed purge and runs the next one', async () => {
    vi.useFakeTimers();
    const errors: unknown[] = [];
    let calls = 0;
    const store = memoryIdempotencyStore();
    const purger = schedulePurge(
      {
        claim: (input) => store.claim(input),
        complete: (key, response, expiresAt) => store.complete(key, response, expiresAt),
        release: (key) => store.release(key),
        extend: (key, lockedUntil) => store.extend(key, lockedUntil),
        purge: async () => {
          calls += 1;
          throw new Error(`purge ${calls}`);
        },
      },
      { intervalMs: 1000, onError: (error) => errors.push(error) },
    );
    await vi.advanceTimersByTimeAsync(2000);
    await purger.stop();
    expect(calls).toBe(2);
    expect(errors).toEqual([new Error('purge 1'), new Error('purge 2')]);
  });
});

describe('keepLease', () => {
  it('does not send another renewal while one is held', async () => {
    vi.useFakeTimers();
    const { store, counts, release } = heldStore();
    const now = () => 0;
    const held = { account: 'acct_1', key: 'k1', token: 't1' };
    const claimed = await store.claim({
      ...held,
      fingerprint: 'f',
      now: new Date(0),
      lockedUntil: new Date(30_000),
      expiresAt: new Date(86_400_000),
    });
    expect(claimed.outcome).toBe('claimed');
    const stop = keepLease(store, held, { leaseMs: 3000, now });
    await vi.advanceTimersByTimeAsync(1000);
    expect(counts.extend).toBe(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(counts.extend).toBe(1);
    release();
    await vi.advanceTimersByTimeAsync(1000);
    expect(counts.extend).toBe(2);
    stop();
    release();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(counts.extend).toBe(2);
  });
});
