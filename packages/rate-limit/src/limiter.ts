import { problem } from '@holdfast/problem-details';
import { memoryStore } from './memory-store';
import type { BucketSpec, BucketStore } from './store';

/** How many requests per window a client may make, with a burst allowance. */
export interface RateLimitConfig {
  /** Tokens added per window. */
  readonly limit: number;
  /** The window in ms. */
  readonly windowMs: number;
  /** Tokens a full bucket holds. */
  readonly burst: number;
}

/** The `RateLimit` and `RateLimit-Policy` header values of one answer. */
export interface RateLimitHeaders {
  readonly RateLimit: string;
  readonly 'RateLimit-Policy': string;
}

/** Options of {@link rateLimiter}. */
export interface RateLimiterOptions {
  /** Where buckets live (default: {@link memoryStore} in this process). */
  readonly store?: BucketStore;
  /** Who is limited, for the 429's detail: "This API key", "This address" (default "This client"). */
  readonly subject?: string;
  /** Called once per refused request (for a metric); must not throw. */
  readonly onRefuse?: () => void;
}

/** A token bucket per key: take, check or spend a token, with the headers of the answer. */
export interface Limiter {
  /**
   * Takes a token of `key`'s bucket and returns the headers to send, or throws 429
   * `rate_limited` (a `ProblemError` with `Retry-After` and the same headers) when it is empty.
   */
  take(key: string): Promise<RateLimitHeaders>;
  /** Throws 429 when `key`'s bucket is empty, without taking a token. */
  check(key: string): Promise<void>;
  /** Takes a token of `key`'s bucket if one is left; never throws for an empty bucket. */
  spend(key: string): Promise<void>;
  /** The `RateLimit-Policy` value every answer carries. */
  readonly policy: string;
}

/**
 * A token bucket per key: `limit` tokens per `windowMs`, holding up to `burst`. Admitted answers
 * carry the `RateLimit` and `RateLimit-Policy` headers of the IETF draft
 * (https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/); a refused request is
 * 429 `rate_limited` (RFC 6585 section 4, https://www.rfc-editor.org/rfc/rfc6585#section-4) with
 * `Retry-After` (RFC 9110 section 10.2.3). The policy states the bucket as the draft can: its quota
 * `q` is the burst and its window `w` the whole seconds an empty bucket takes to refill, so 100/1s
 * with a burst of 200 reads `q=200;w=2`; then `r` (tokens left) never exceeds `q`, and `t`
 * (seconds until the bucket is full again) never exceeds `w`.
 *
 * @example
 * ```ts
 * const limiter = rateLimiter({ limit: 100, windowMs: 1000, burst: 200 }, { subject: 'This API key' });
 * const headers = await limiter.take('key_1'); // throws a 429 ProblemError once the burst is spent
 * ```
 */
export function rateLimiter(config: RateLimitConfig, options: RateLimiterOptions = {}): Limiter {
  const { limit, windowMs, burst } = config;
  for (const [name, value] of Object.entries({ limit, windowMs, burst })) {
    if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number`);
  }
  const { store = memoryStore(), subject = 'This client', onRefuse } = options;
  const spec: BucketSpec = { burst, perMs: limit / windowMs };
  const window = windowMs % 1000 === 0 ? `${windowMs / 1000} s` : `${windowMs} ms`;
  const refillSeconds = Math.max(1, Math.ceil(burst / spec.perMs / 1000));
  const policy = `"default";q=${burst};w=${refillSeconds}`;
  const refuse = (tokens: number) => {
    onRefuse?.();
    const retryAfter = Math.max(1, Math.ceil((1 - tokens) / spec.perMs / 1000));
    return problem('rate_limited', {
      detail: `${subject} may make ${limit} requests per ${window} (burst ${burst}).`,
      retryAfter,
      headers: { RateLimit: `"default";r=0;t=${retryAfter}`, 'RateLimit-Policy': policy },
    });
  };
  return {
    policy,
    async take(key) {
      const state = await store.consume(key, spec, true);
      if (!state.admitted) throw refuse(state.tokens);
      const reset = Math.min(refillSeconds, Math.ceil((burst - state.tokens) / spec.perMs / 1000));
      return { RateLimit: `"default";r=${Math.floor(state.tokens)};t=${reset}`, 'RateLimit-Policy': policy };
    },
    async check(key) {
      const state = await store.consume(key, spec, false);
      if (!state.admitted) throw refuse(state.tokens);
    },
    async spend(key) {
      await store.consume(key, spec, true);
    },
  };
}

/** What takes headers by name: a Fetch `Headers`, or a Hono `Context` before its response exists. */
type HeaderTarget = Headers | { header(name: string, value: string): unknown };

/**
 * Puts the `RateLimit` headers of an admitted request on a response's headers, unless the
 * response carries its own (a 429 does): what every door does after the handler answered. Given
 * a Hono `Context` before the handler runs, it prepares them, so Hono puts them into the
 * response it builds without a rebuild.
 *
 * @example
 * ```ts
 * const response = await handle(request);
 * applyRateLimitHeaders(response.headers, await limiter.take(key));
 * applyRateLimitHeaders(c, await limiter.take(`hooks:${name}`)); // in a Hono handler or hook
 * ```
 */
export function applyRateLimitHeaders(target: HeaderTarget, headers: RateLimitHeaders): void {
  if ('header' in target) {
    target.header('RateLimit', headers.RateLimit);
    target.header('RateLimit-Policy', headers['RateLimit-Policy']);
    return;
  }
  if (target.has('RateLimit')) return;
  target.set('RateLimit', headers.RateLimit);
  target.set('RateLimit-Policy', headers['RateLimit-Policy']);
}
