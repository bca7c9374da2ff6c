import { problem } from '@holdfast/problem-details';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import type { RateLimitConfig } from './config';
import type { AppEnv } from './context';

interface Bucket {
  tokens: number;
  updated: number;
}

/** Most buckets one limiter holds: past it the least recently used goes (a flood of new keys, names or addresses cannot grow memory). */
export const MAX_BUCKETS = 10_000;

/**
 * Token buckets held in memory, at most `maxBuckets` of them: a Map in least-recently-used
 * order (every use moves a key to the end; the first key is the one evicted). An evicted
 * bucket comes back full, which only ever favours the client whose bucket went.
 */
class Buckets {
  readonly #map = new Map<string, Bucket>();
  constructor(
    private readonly config: RateLimitConfig,
    private readonly now: () => number,
    private readonly maxBuckets: number,
  ) {}

  get size(): number {
    return this.#map.size;
  }

  /** The bucket of `key`, refilled to now and moved to the most recently used end. */
  current(key: string): Bucket {
    const t = this.now();
    const perMs = this.config.limit / this.config.windowMs;
    const bucket = this.#map.get(key) ?? { tokens: this.config.burst, updated: t };
    bucket.tokens = Math.min(this.config.burst, bucket.tokens + (t - bucket.updated) * perMs);
    bucket.updated = t;
    this.#map.delete(key);
    this.#map.set(key, bucket);
    while (this.#map.size > this.maxBuckets) {
      const oldest = this.#map.keys().next().value;
      if (oldest === undefined) break;
      this.#map.delete(oldest);
    }
    return bucket;
  }
}

/** The `RateLimit` and `RateLimit-Policy` values of an admitted request. */
export interface RateLimitHeaders {
  readonly RateLimit: string;
  readonly 'RateLimit-Policy': string;
}

/** What a limiter answers about one request: admitted with headers, or refused. */
export interface Limiter {
  /**
   * Takes a token of `key`'s bucket and sets the `RateLimit` headers on `c`, or throws 429
   * `rate_limited` with `Retry-After` when the bucket is empty.
   */
  take(c: Context, key: string): RateLimitHeaders;
  /** Throws 429 when `key`'s bucket is empty, without taking a token. */
  check(c: Context, key: string): void;
  /** Takes a token of `key`'s bucket if any is left, setting no header. */
  spend(key: string): void;
  /** How many buckets are held now (at most `maxBuckets`). */
  readonly size: number;
}

/**
 * A token bucket per key (CONTRACT section 9): `limit` tokens per `windowMs`, holding up to
 * `burst`. Every admitted answer carries the IETF draft's `RateLimit` and `RateLimit-Policy`
 * headers; a refused request gets 429 `rate_limited` with `Retry-After` (SPEC section 7 rule 4).
 * The policy states the bucket as the draft can: its quota `q` is the burst (what a full bucket
 * holds) and its window `w` the whole seconds an empty bucket takes to refill, so 100/1s with a
 * burst of 200 reads `q=200;w=2`. Then `r` (tokens left) never exceeds `q`, and `t` (seconds
 * until the bucket is full again) never exceeds `w`. `subject` names who is limited in the 429
 * text ("This API key", "This receiver", "This address").
 *
 * @example
 * ```ts
 * const limiter = rateLimiter({ limit: 100, windowMs: 1000, burst: 200 }, Date.now, 'This receiver');
 * limiter.take(c, `hooks:${name}`);
 * ```
 */
export function rateLimiter(
  config: RateLimitConfig,
  now: () => number = Date.now,
  subject = 'This API key',
  maxBuckets = MAX_BUCKETS,
): Limiter {
  const buckets = new Buckets(config, now, maxBuckets);
  const perMs = config.limit / config.windowMs;
  const window = config.windowMs % 1000 === 0 ? `${config.windowMs / 1000} s` : `${config.windowMs} ms`;
  const refillSeconds = Math.max(1, Math.ceil(config.burst / perMs / 1000));
  const policy = `"default";q=${config.burst};w=${refillSeconds}`;
  const refuse = (bucket: Bucket) => {
    const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000));
    return problem('rate_limited', {
      detail: `${subject} may make ${config.limit} requests per ${window} (burst ${config.burst}).`,
      retryAfter,
      headers: { RateLimit: `"default";r=0;t=${retryAfter}`, 'RateLimit-Policy': policy },
    });
  };
  return {
    take(c, key) {
      const bucket = buckets.current(key);
      if (bucket.tokens < 1) throw refuse(bucket);
      bucket.tokens -= 1;
      const reset = Math.min(refillSeconds, Math.ceil((config.burst - bucket.tokens) / perMs / 1000));
      const headers = {
        RateLimit: `"default";r=${Math.floor(bucket.tokens)};t=${reset}`,
        'RateLimit-Policy': policy,
      };
      // Prepared before the handler: Hono puts them into the response it builds, no rebuild needed.
      c.header('RateLimit', headers.RateLimit);
      c.header('RateLimit-Policy', policy);
      return headers;
    },
    check(_c, key) {
      const bucket = buckets.current(key);
      if (bucket.tokens < 1) throw refuse(bucket);
    },
    spend(key) {
      const bucket = buckets.current(key);
      if (bucket.tokens >= 1) bucket.tokens -= 1;
    },
    get size() {
      return buckets.size;
    },
  };
}

/**
 * Rate limits every request by `keyOf` (by default the API key, after `authenticate()`), with
 * the headers of {@link rateLimiter}. Buckets live in this process: with several API processes
 * each enforces its own share.
 */
export function rateLimit(
  config: RateLimitConfig,
  now: () => number = Date.now,
  keyOf: (c: Context<AppEnv>) => string = (c) => c.get('principal').keyId,
): MiddlewareHandler<AppEnv> {
  const limiter = rateLimiter(config, now);
  return async (c, next) => {
    const headers = limiter.take(c, keyOf(c));
    await next();
    // A response the handler built itself (or an error's) did not get the prepared headers.
    if (!c.res.headers.has('RateLimit')) {
      c.res.headers.set('RateLimit', headers.RateLimit);
      c.res.headers.set('RateLimit-Policy', headers['RateLimit-Policy']);
    }
  };
}

/**
 * The client's address as the socket saw it (no proxy header is trusted), or `undefined` for
 * a request that came without a socket (`app.request()` in tests).
 */
export function clientAddress(c: Context): string | undefined {
  if (!(c.env as { incoming?: unknown } | undefined)?.incoming) return undefined;
  try {
    return getConnInfo(c).remote.address;
  } catch {
    return undefined;
  }
}

/**
 * The per-address limit on failures (CONTRACT section 10): a request with a missing, malformed
 * or unknown key, or a badly signed webhook, spends a token of its address's bucket; once the
 * bucket is empty, that address's unauthenticated requests are 429 before any database work
 * or signature check. Addresses are independent, and an admitted valid key never spends one,
 * so one address's flood never limits another address or a working key.
 */
export function addressLimiter(config: RateLimitConfig, now: () => number = Date.now): Limiter {
  return rateLimiter(config, now, 'This address', MAX_BUCKETS);
}
