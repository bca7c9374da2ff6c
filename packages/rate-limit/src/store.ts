/** The shape of one token bucket: how many tokens it holds when full, and how fast it refills. */
export interface BucketSpec {
  /** Tokens a full bucket holds: the burst. */
  readonly burst: number;
  /** Tokens added per millisecond: `limit / windowMs`. */
  readonly perMs: number;
}

/** A bucket after one {@link BucketStore.consume}: whether a token was there, and how many are left. */
export interface BucketState {
  /** Whether the bucket held at least one token before this call (a token was taken if asked). */
  readonly admitted: boolean;
  /** Tokens left after this call, fractional (the refill is continuous). */
  readonly tokens: number;
}

/**
 * Where buckets live. `consume` refills `key`'s bucket up to now, and when `spend` is true and a
 * whole token is there, takes it; all in one step, so two callers never both take the last
 * token. A missing bucket is a full one.
 *
 * @example
 * ```ts
 * const state = await store.consume('key_1', { burst: 200, perMs: 0.1 }, true);
 * if (!state.admitted) console.log('refused');
 * ```
 */
export interface BucketStore {
  consume(key: string, spec: BucketSpec, spend: boolean): Promise<BucketState> | BucketState;
}
