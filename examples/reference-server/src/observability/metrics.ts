import type postgres from 'postgres';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { deliveryQueue } from './delivery-queue';

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
  /** `holdfast_delivery_attempts_total{outcome}`: succeeded, failed, dead or disabled (410 Gone). */
  readonly deliveryAttempts: Counter<'outcome'>;
  /** `holdfast_delivery_attempt_duration_seconds{outcome}`. */
  readonly deliveryDuration: Histogram<'outcome'>;
  /** `holdfast_endpoint_concurrency_limit{endpoint}`: the adaptive in-flight limit of endpoints held below their ceiling. */
  readonly endpointConcurrency: Gauge<'endpoint'>;
}

/** Options of {@link createMetrics}. */
export interface MetricsOptions {
  /** The database the queue gauges read. */
  readonly sql: postgres.Sql;
}

/**
 * Endpoints whose adaptive limit is below its ceiling: the ones worth a look. Bounded, so the
 * gauge's series stay few however many endpoints exist.
 */
function throttledEndpoints(
  sql: postgres.Sql,
): Promise<{ endpoint_id: string; concurrency_limit: number }[]> {
  return sql<{ endpoint_id: string; concurrency_limit: number }[]>`
    select endpoint_id, concurrency_limit::float8 as concurrency_limit from holdfast_endpoint_pacing
    where concurrency_limit is not null and concurrency_max is not null and concurrency_limit < concurrency_max
    order by concurrency_limit / concurrency_max, endpoint_id
    limit 100`;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Builds the registry: HTTP, rate-limit and idempotency counters the app increments, delivery
 * attempt counters the workers' `onAttempt` hook feeds (`observeAttempt`), and the queue gauges (due, in
 * flight, dead, age of the oldest due delivery) read from SQL at each scrape, so they are the
 * same whichever process is scraped. Node's default process metrics come along.
 *
 * @example
 * ```ts
 * const metrics = createMetrics({ sql });
 * const text = await metrics.registry.metrics();
 * ```
 */
export function createMetrics({ sql }: MetricsOptions): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'holdfast_' });
  const deliveryAttempts = new Counter({
    name: 'holdfast_delivery_attempts_total',
    help: 'Webhook delivery attempts made by this process, by outcome: succeeded (2xx), failed (will be retried), dead (the last one), disabled (410 Gone).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const deliveryDuration = new Histogram({
    name: 'holdfast_delivery_attempt_duration_seconds',
    help: 'Latency of webhook delivery attempts, by outcome.',
    labelNames: ['outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  for (const outcome of ['succeeded', 'failed', 'dead', 'disabled']) {
    deliveryAttempts.inc({ outcome }, 0);
    deliveryDuration.zero({ outcome });
  }
  const queue = deliveryQueue(sql);
  const gauge = (name: string, help: string, pick: (q: Awaited<ReturnType<typeof queue>>) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.set(pick(await queue()));
      },
    });
  gauge('holdfast_deliveries_due', 'Deliveries due now and not leased, on active endpoints.', (q) => q.due);
  gauge('holdfast_deliveries_in_flight', 'Deliveries leased by a worker right now.', (q) => q.inFlight);
  gauge('holdfast_deliveries_dead', 'Deliveries that used every attempt (dead letters).', (q) => q.dead);
  gauge(
    'holdfast_delivery_oldest_due_age_seconds',
    'How long the oldest due delivery on an active endpoint has waited (0 when none is due).',
    (q) => q.oldestDueSeconds,
  );
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
    deliveryAttempts,
    deliveryDuration,
    endpointConcurrency: new Gauge({
      name: 'holdfast_endpoint_concurrency_limit',
      help: 'The adaptive in-flight limit of endpoints the sender holds below their ceiling (at most 100, the most throttled first).',
      labelNames: ['endpoint'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const row of await throttledEndpoints(sql))
          this.set({ endpoint: row.endpoint_id }, row.concurrency_limit);
      },
    }),
  };
}
