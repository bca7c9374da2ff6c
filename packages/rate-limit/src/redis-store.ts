import { createHash } from 'node:crypto';
import { memoryStore } from './memory-store';
import type { BucketSpec, BucketState, BucketStore } from './store';
import { TOKEN_BUCKET_SCRIPT } from './token-bucket-script';

/**
 * The two Redis commands the store sends (https://redis.io/docs/latest/commands/evalsha/), as an
 * ioredis client (`new Redis(url)`) has them. Any client with these two methods works.
 */
export interface RedisScripting {
  evalsha(sha1: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
}

/** Options of {@link redisStore}. */
export interface RedisStoreOptions {
  /** Prefix of every bucket's Redis key (default `holdfast:rate-limit:`). */
  readonly prefix?: string;
  /**
   * Where buckets live while Redis does not answer (default: a memory store in this process).
   * Each process then enforces the limit on its own, as without Redis.
   */
  readonly fallback?: BucketStore;
  /** How long to wait for Redis before using the fallback (default 250 ms). */
  readonly timeoutMs?: number;
  /** Told of each failed Redis call (for a log line or a metric); must not throw. */
  readonly onError?: (error: unknown) => void;
}

/** A {@link BucketStore} in Redis, with whether the last call was answered by the fallback. */
export interface RedisStore extends BucketStore {
  consume(key: string, spec: BucketSpec, spend: boolean): Promise<BucketState>;
  /** True while Redis is failing and the fallback store answers. */
  readonly degraded: boolean;
}

const SHA = createHash('sha1').update(TOKEN_BUCKET_SCRIPT).digest('hex');

function parseReply(reply: unknown): BucketState {
  if (!Array.isArray(reply) || reply.length !== 2)
    throw new TypeError('unexpected reply from the token bucket script');
  const tokens = Number(reply[1]);
  if (!Number.isFinite(tokens)) throw new TypeError('unexpected token count from the token bucket script');
  return { admitted: Number(reply[0]) === 1, tokens };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
  });
  // The losing promise may still reject later: that rejection is expected and handled here.
  promise.catch(() => {});
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Token buckets in Redis, so every process enforces one limit: each call is one `EVALSHA` of
 * the token-bucket Lua script (loaded with `EVAL` the first time Redis answers `NOSCRIPT`).
 *
 * When Redis fails or is slower than `timeoutMs`, the call is answered by the `fallback` store
 * (by default this process's memory): the limiter fails open to per-process limits, never to no
 * limit, and never turns a Redis outage into an error for the client. The next call tries Redis
 * again, so sharing resumes as soon as it answers.
 *
 * @example
 * ```ts
 * import Redis from 'ioredis';
 * import { rateLimiter } from '@holdfast/rate-limit';
 * import { redisStore } from '@holdfast/rate-limit/redis';
 *
 * const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
 * const limiter = rateLimiter({ limit: 100, windowMs: 1000, burst: 200 }, { store: redisStore(redis) });
 * ```
 */
export function redisStore(client: RedisScripting, options: RedisStoreOptions = {}): RedisStore {
  const { prefix = 'holdfast:rate-limit:', fallback = memoryStore(), timeoutMs = 250, onError } = options;
  let degraded = false;
  const run = async (key: string, spec: BucketSpec, spend: boolean): Promise<unknown> => {
    const args = [prefix + key, String(spec.burst), String(spec.perMs), spend ? '1' : '0'];
    try {
      return await client.evalsha(SHA, 1, ...args);
    } catch (error) {
      if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error;
      return client.eval(TOKEN_BUCKET_SCRIPT, 1, ...args);
    }
  };
  return {
    async consume(key, spec, spend) {
      try {
        const state = parseReply(await withTimeout(run(key, spec, spend), timeoutMs));
        degraded = false;
        return state;
      } catch (error) {
        degraded = true;
        onError?.(error);
        return fallback.consume(key, spec, spend);
      }
    },
    get degraded() {
      return degraded;
    },
  };
}
