import type { BucketSpec, BucketState, BucketStore } from './store';

/** Most buckets a memory store holds by default: past it the least recently used goes. */
export const MAX_BUCKETS = 10_000;

/** Options of {@link memoryStore}. */
export interface MemoryStoreOptions {
  /** Wall clock in ms (default `Date.now`). */
  readonly now?: () => number;
  /** Buckets held at most (default {@link MAX_BUCKETS}); a flood of new keys cannot grow memory. */
  readonly maxBuckets?: number;
}

/** A {@link BucketStore} in this process's memory, with the number of buckets it holds. */
export interface MemoryStore extends BucketStore {
  consume(key: string, spec: BucketSpec, spend: boolean): BucketState;
  /** Buckets held now (at most `maxBuckets`). */
  readonly size: number;
}

interface Bucket {
  tokens: number;
  updated: number;
}

/**
 * Token buckets in memory, at most `maxBuckets` of them: a Map in least-recently-used order
 * (every use moves a key to the end; the first key is the one evicted). An evicted bucket
 * comes back full, which only ever favours the client whose bucket went.
 *
 * @example
 * ```ts
 * const store = memoryStore({ maxBuckets: 1000 });
 * store.consume('10.0.0.1', { burst: 40, perMs: 0.02 }, true); // { admitted: true, tokens: 39 }
 * ```
 */
export function memoryStore({
  now = Date.now,
  maxBuckets = MAX_BUCKETS,
}: MemoryStoreOptions = {}): MemoryStore {
  if (!Number.isInteger(maxBuckets) || maxBuckets < 1)
    throw new RangeError('maxBuckets must be an integer >= 1');
  const map = new Map<string, Bucket>();
  return {
    consume(key, spec, spend) {
      const t = now();
      const bucket = map.get(key) ?? { tokens: spec.burst, updated: t };
      bucket.tokens = Math.min(spec.burst, bucket.tokens + Math.max(0, t - bucket.updated) * spec.perMs);
      bucket.updated = t;
      map.delete(key);
      map.set(key, bucket);
      while (map.size > maxBuckets) {
        const oldest = map.keys().next().value;
        if (oldest === undefined) break;
        map.delete(oldest);
      }
      const admitted = bucket.tokens >= 1;
      if (admitted && spend) bucket.tokens -= 1;
      return { admitted, tokens: bucket.tokens };
    },
    get size() {
      return map.size;
    },
  };
}
