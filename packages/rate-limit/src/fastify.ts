import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Limiter } from './limiter';

/**
 * An `onRequest` hook that rate limits every request by `keyOf(request)` (an API key id, a
 * client address): takes a token before the handler and sets the `RateLimit` headers, or throws
 * 429 `rate_limited` (a `ProblemError`, with `Retry-After`) for the error handler to render.
 *
 * @example
 * ```ts
 * app.addHook('onRequest', rateLimit(rateLimiter({ limit: 100, windowMs: 1000, burst: 200 }), (request) => request.ip));
 * ```
 */
export function rateLimit(
  limiter: Limiter,
  keyOf: (request: FastifyRequest) => string,
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  return async (request, reply) => {
    const headers = await limiter.take(keyOf(request));
    reply.header('RateLimit', headers.RateLimit);
    reply.header('RateLimit-Policy', headers['RateLimit-Policy']);
  };
}
