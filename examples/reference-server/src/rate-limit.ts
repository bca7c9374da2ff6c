import type { FailureLimit } from '@holdfast/api-keys';
import {
  applyRateLimitHeaders,
  type Limiter,
  memoryStore,
  type RateLimitConfig,
  rateLimiter,
} from '@holdfast/rate-limit';
import { rateLimit as limitBy } from '@holdfast/rate-limit/hono';
import { redisStore } from '@holdfast/rate-limit/redis';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv, Deps } from './context';

export type { Limiter } from '@holdfast/rate-limit';

/**
 * The server's limiters, each its own set of buckets: per API key, per failing address, per
 * receiver, per address on the public documents.
 */
export type LimiterName = 'key' | 'address' | 'receiver' | 'public';

const SUBJECT: Record<LimiterName, string> = {
  key: 'This API key',
  address: 'This address',
  receiver: 'This receiver',
  public: 'This address',
};

/**
 * One limiter of the server (CONTRACT sections 9 and 10), in Redis when `HOLDFAST_REDIS_URL` is
 * set (every process shares one limit; while Redis does not answer each process falls back to
 * its own buckets), else in this process. Refusals are counted by the metrics when enabled.
 */
export function limiterFor(deps: Deps, name: LimiterName, config: RateLimitConfig): Limiter {
  const local = memoryStore({ now: deps.now });
  const store = deps.redis
    ? redisStore(deps.redis, {
        prefix: `holdfast:rate-limit:${name}:`,
        fallback: local,
        timeoutMs: deps.config.redisTimeoutMs,
        onError: (error) =>
          deps.log?.warn({ err: error, limiter: name }, 'rate limit store unavailable: limiting in process'),
      })
    : local;
  return rateLimiter(config, {
    store,
    subject: SUBJECT[name],
    onRefuse: () => deps.metrics?.rateLimitRefusals.inc({ limiter: name }),
  });
}

/** Rate limits every /v1 request by its API key (after `authenticate()`). */
export function rateLimit(deps: Deps): MiddlewareHandler<AppEnv> {
  return limitBy<AppEnv>(limiterFor(deps, 'key', deps.config.rateLimit), (c) => c.get('principal').keyId);
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
export function addressLimiter(deps: Deps): Limiter {
  return limiterFor(deps, 'address', deps.config.addressRateLimit);
}

/**
 * `limiter` by the client's address, as `apiKeyAuth()` spends it on failed authentication; a
 * request without a socket (`app.request()` in tests) is not limited.
 */
export function perAddress(limiter: Limiter): FailureLimit<Context> {
  return {
    check: async (c) => {
      const address = clientAddress(c);
      if (address) await limiter.check(address);
    },
    spend: async (c) => {
      const address = clientAddress(c);
      if (address) await limiter.spend(address);
    },
  };
}

/**
 * Rate limits the routes anyone may call without a key (`/openapi.json`, `/docs`, `/problems`,
 * `/dashboard`, `/healthz`) by the client's address (`HOLDFAST_PUBLIC_RATE_LIMIT`): they cost
 * CPU or a database round trip, and one address's flood must not spend what other clients need
 * (issue 35). Each address has its own bucket; `/livez` and `/readyz` are never limited (a
 * probe must not be refused). A request without a socket (`app.request()` in tests) is not
 * limited.
 */
export function publicRateLimit(deps: Deps): MiddlewareHandler<AppEnv> {
  const limiter = limiterFor(deps, 'public', deps.config.http.publicRateLimit);
  return async (c, next) => {
    const address = clientAddress(c);
    if (address === undefined) return next();
    const headers = await limiter.take(address);
    applyRateLimitHeaders(c, headers);
    await next();
    applyRateLimitHeaders(c.res.headers, headers);
  };
}
