import { problem } from '@holdfast/problem-details';
import type { Context, MiddlewareHandler } from 'hono';
import type { RateLimitConfig } from './config';
import type { AppEnv } from './context';

interface Bucket {
  tokens: number;
  updated: number;
}

/**
 * A token bucket per API key (CONTRACT section 9): `limit` tokens per `windowMs`, holding up
 * to `burst`. Every answer carries the IETF draft's `RateLimit` and `RateLimit-Policy` headers;
 * a refused request gets 429 `rate_limited` with `Retry-After` (SPEC section 7 rule 4).
 * The policy states the bucket as the draft can: its quota `q` is the burst (what a full bucket
 * holds) and its window `w` the whole seconds an empty bucket takes to refill, so 100/1s with a
 * burst of 200 reads `q=200;w=2`. Then `r` (tokens left) never exceeds `q`, and `t` (seconds
 * until the bucket is full again) never exceeds `w`.
 * Buckets live in this process: with several API processes each enforces its own share.
 * The webhook receiver is limited per receiver name with the same quota (`keyOf`).
 */
export function rateLimit(
  config: RateLimitConfig,
  now: () => number = Date.now,
  keyOf: (c: Context<AppEnv>) => string = (c) => c.get('principal').keyId,
): MiddlewareHandler<AppEnv> {
  const buckets = new Map<string, Bucket>();
  const perMs = config.limit / config.windowMs;
  const window = config.windowMs % 1000 === 0 ? `${config.windowMs / 1000} s` : `${config.windowMs} ms`;
  const refillSeconds = Math.max(1, Math.ceil(config.burst / perMs / 1000));
  const policy = `"default";q=${config.burst};w=${refillSeconds}`;
  return async (c, next) => {
    const key = keyOf(c);
    const t = now();
    const bucket = buckets.get(key) ?? { tokens: config.burst, updated: t };
    bucket.tokens = Math.min(config.burst, bucket.tokens + (t - bucket.updated) * perMs);
    bucket.updated = t;
    buckets.set(key, bucket);
    if (buckets.size > 100_000) buckets.clear();
    if (bucket.tokens < 1) {
      const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000));
      throw problem('rate_limited', {
        detail: `This API key may make ${config.limit} requests per ${window} (burst ${config.burst}).`,
        retryAfter,
        headers: { RateLimit: `"default";r=0;t=${retryAfter}`, 'RateLimit-Policy': policy },
      });
    }
    bucket.tokens -= 1;
    const reset = Math.min(refillSeconds, Math.ceil((config.burst - bucket.tokens) / perMs / 1000));
    const remaining = `"default";r=${Math.floor(bucket.tokens)};t=${reset}`;
    // Prepared before the handler: Hono puts them into the response it builds, no rebuild needed.
    c.header('RateLimit', remaining);
    c.header('RateLimit-Policy', policy);
    await next();
    if (!c.res.headers.has('RateLimit')) {
      c.res.headers.set('RateLimit', remaining);
      c.res.headers.set('RateLimit-Policy', policy);
    }
  };
}
