import type { Server } from 'node:http';
import type { Db } from '@holdfast/db';
import Redis from 'ioredis';
import type { Config } from './config';
import { createLogger, type Logger } from './observability/logger';
import { createMetrics, type Metrics } from './observability/metrics';
import { serveMetrics } from './observability/metrics-server';

/** What a process needs to be operated: logs, metrics (when asked for) and shared rate limits. */
export interface Operations {
  readonly log: Logger;
  readonly metrics: Metrics | undefined;
  /** The Redis client of `HOLDFAST_REDIS_URL`, or undefined. */
  readonly redis: Redis | undefined;
  /** `http://host:port/metrics`, or undefined. */
  readonly metricsUrl: string | undefined;
  close(): Promise<void>;
}

/**
 * Starts the logger, the Redis client for shared rate limits (no offline queue and no retries
 * per command: while Redis is down every limiter answers from this process's buckets at once,
 * and the client reconnects in the background) and the metrics listener on
 * `HOLDFAST_METRICS_PORT`.
 *
 * @example
 * ```ts
 * const ops = await startOperations(config, db, process.env);
 * await ops.close();
 * ```
 */
export async function startOperations(
  config: Config,
  db: Db,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Operations> {
  const log = createLogger(env);
  let redis: Redis | undefined;
  if (config.redisUrl) {
    let warned = false;
    redis = new Redis(config.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    redis.on('error', (error: Error) => {
      if (warned) return;
      warned = true;
      log.warn(
        { err: error.message },
        'Redis unavailable: rate limits are enforced per process until it answers',
      );
    });
    redis.on('ready', () => {
      warned = false;
    });
  }
  let metrics: Metrics | undefined;
  let server: Server | undefined;
  let metricsUrl: string | undefined;
  if (config.metricsPort !== undefined) {
    metrics = createMetrics({ db });
    server = await serveMetrics(metrics.registry, config.metricsPort, config.host);
    const address = server.address();
    if (address && typeof address === 'object') {
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      metricsUrl = `http://${host}:${address.port}/metrics`;
    }
  }
  return {
    log,
    metrics,
    redis,
    metricsUrl,
    async close() {
      const listener = server;
      if (listener) await new Promise<void>((resolve) => listener.close(() => resolve()));
      redis?.disconnect();
    },
  };
}
