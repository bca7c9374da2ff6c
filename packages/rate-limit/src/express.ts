import type { Request, RequestHandler } from 'express';
import type { Limiter } from './limiter';

/**
 * Rate limits every request by `keyOf(req)` (an API key id, a client address): takes a token
 * before the handler and sets the `RateLimit` headers, or passes 429 `rate_limited` (a
 * `ProblemError`, with `Retry-After`) to the error middleware when the bucket is empty.
 *
 * @example
 * ```ts
 * app.use(rateLimit(rateLimiter({ limit: 100, windowMs: 1000, burst: 200 }), (req) => req.ip ?? 'unknown'));
 * ```
 */
export function rateLimit(limiter: Limiter, keyOf: (req: Request) => string): RequestHandler {
  return async (req, res, next) => {
    // A refusal rejects: Express 5 hands it to the error middleware.
    const headers = await limiter.take(keyOf(req));
    // Set before the handler runs, they are in whatever it (or the error middleware) sends.
    res.setHeader('RateLimit', headers.RateLimit);
    res.setHeader('RateLimit-Policy', headers['RateLimit-Policy']);
    next();
  };
}
