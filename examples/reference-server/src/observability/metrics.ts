import type { Db } from '@holdfast/db';
import { type DeliveryMetrics, deliveryMetrics } from '@holdfast/webhook-delivery/prometheus';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/**
 * The server's Prometheus metrics (CONTRACT section 10, "Metrics"), in a registry of their own.
 * Labels are low-cardinality by construction: route templates (`/v1/orders/:id`), methods,
 * statuses, limiter names and outcomes, never ids, keys or addresses.
 */
export interface Metrics {
  readonly registry: Registry;
  /** `holdfast_http_requests_total{route,method,status}`. */
  readonly httpRequests: Counter<'route' | 'method' | 'status'>;
  /** `holdfast_http_request_duration_seconds{route,method,status}`. */
  readonly httpDuration: Histogram<'route' | 'method' | 'status'>;
  /** `holdfast_rate_limit_refusals_total{limiter}`: key, address or receiver. */
  readonly rateLimitRefusals: Counter<'limiter'>;
  /** `holdfast_idempotency_total{outcome}`: replayed, reused (422) or in_use (409). */
  readonly idempotency: Counter<'outcome'>;
  /**
   * The delivery metrics of `@holdfast/webhook-delivery/prometheus`: attempts by outcome, the
   * queue gauges and the throttled endpoints' adaptive limits.
   */
  readonly delivery: DeliveryMetrics;
}

/** Options of {@link createMetrics}. */
export interface MetricsOptions {
  /** The database the queue gauges read. */
  readonly db: Db;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Builds the registry: HTTP, rate-limit and idempotency counters the app increments, and the
 * delivery metrics (attempts the workers' `onAttempt` hook feeds through `observeAttempt`, queue
 * gauges read from SQL at each scrape, so they are the same whichever process is scraped).
 * Node's default process metrics come along.
 *
 * @example
 * ```ts
 * const metrics = createMetrics({ db });
 * const text = await metrics.registry.metrics();
 * ```
 */
export function createMetrics({ db }: MetricsOptions): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'holdfast_' });
  return {
    registry,
    httpRequests: new Counter({
      name: 'holdfast_http_requests_total',
      help: 'HTTP requests by route template, method and status.',
      labelNames: ['route', 'method', 'status'] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'holdfast_http_request_duration_seconds',
      help: 'HTTP request latency by route template, method and status.',
      labelNames: ['route', 'method', 'status'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    rateLimitRefusals: new Counter({
      name: 'holdfast_rate_limit_refusals_total',
      help: 'Requests refused 429 by a rate limiter: key (per API key), address (failed authentication), receiver.',
      labelNames: ['limiter'] as const,
      registers: [registry],
    }),
    idempotency: new Counter({
      name: 'holdfast_idempotency_total',
      help: 'Idempotency-Key outcomes other than a first run: replayed, reused (422), in_use (409).',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    delivery: deliveryMetrics({ db, registers: [registry], buckets: LATENCY_BUCKETS }),
  };
}
