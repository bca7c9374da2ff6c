import type { Context, Env, MiddlewareHandler } from 'hono';
import { applyRateLimitHeaders, type Limiter } from './limiter';

/**
 * Rate limits every request by `keyOf(c)` (an API key id, a client address): takes a token
 * before the handler and sends the `RateLimit` headers, or throws 429 `rate_limited` (a
 * `ProblemError`, for the app's error handler to render) when the bucket is empty.
 *
 * @example
 * ```ts
 * app.use(rateLimit(rateLimiter({ limit: 100, windowMs: 1000, burst: 200 }), (c) => c.get('principal').keyId));
 * ```
 */
export function rateLimit<E extends Env>(
  limiter: Limiter,
  keyOf: (c: Context<E>) => string,
): MiddlewareHandler<E> {
  return async (c, next) => {
    const headers = await limiter.take(keyOf(c));
    applyRateLimitHeaders(c, headers);
    await next();
    // A response the handler built itself (or an error's) did not get the prepared headers.
    applyRateLimitHeaders(c.res.headers, headers);
  };
}
