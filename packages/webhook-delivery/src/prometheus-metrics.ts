import type { Db } from '@holdfast/db';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { queueDepth } from './queue-depth';
import { workerStatements } from './sql/worker';
import type { AttemptInfo } from './worker';

/** The metric outcome of an attempt: a failure that will be retried is `failed`. */
export type AttemptMetricOutcome = 'succeeded' | 'failed' | 'dead' | 'disabled';

const OUTCOME: Record<AttemptInfo['outcome'], AttemptMetricOutcome> = {
  succeeded: 'succeeded',
  retry: 'failed',
  dead: 'dead',
  disabled: 'disabled',
};

/**
 * The metric outcome of a worker's attempt (`retry` is `failed`).
 *
 * @example
 * ```ts
 * attemptOutcome('retry'); // 'failed'
 * ```
 */
export function attemptOutcome(outcome: AttemptInfo['outcome']): AttemptMetricOutcome {
  return OUTCOME[outcome];
}

/** Options of {@link deliveryMetrics}. */
export interface DeliveryMetricsOptions {
  /** The database the queue gauges read at each scrape. */
  readonly db: Db;
  /** The schema the sender's tables are in. @defaultValue the connection's `search_path` */
  readonly schema?: string;
  /** The registries the metrics join. */
  readonly registers: readonly Registry[];
  /** Before every metric name. Default `holdfast_`. */
  readonly prefix?: string;
  /** Histogram buckets of attempt latency, seconds. */
  readonly buckets?: readonly number[];
}

/** What {@link deliveryMetrics} gives the delivery worker. */
export interface DeliveryMetrics {
  /** The worker's `onAttempt` hook: counts each attempt by outcome, with its latency. */
  onAttempt(info: AttemptInfo): void;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The delivery system's Prometheus metrics (prom-client): attempts and their latency by outcome
 * (`<prefix>delivery_attempts_total`, `<prefix>delivery_attempt_duration_seconds`), fed by the
 * returned `onAttempt`; the queue (`<prefix>deliveries_due`, `_in_flight`, `_dead`,
 * `<prefix>delivery_oldest_due_age_seconds`) and the adaptive limit of throttled endpoints
 * (`<prefix>endpoint_concurrency_limit{endpoint}`, at most 100 series, the most throttled first) read from SQL at each
 * scrape. Labels are outcomes, never delivery ids.
 *
 * @example
 * ```ts
 * const metrics = deliveryMetrics({ db, registers: [registry] });
 * createDeliveryWorker({ db, onAttempt: metrics.onAttempt });
 * ```
 */
export function deliveryMetrics(options: DeliveryMetricsOptions): DeliveryMetrics {
  const { db, prefix = 'holdfast_', buckets = LATENCY_BUCKETS } = options;
  const throttled = workerStatements(options.schema).throttled;
  const registers = [...options.registers];
  const attempts = new Counter({
    name: `${prefix}delivery_attempts_total`,
    help: 'Webhook delivery attempts made by this process, by outcome: succeeded (2xx), failed (will be retried), dead (the last one), disabled (410 Gone).',
    labelNames: ['outcome'] as const,
    registers,
  });
  const duration = new Histogram({
    name: `${prefix}delivery_attempt_duration_seconds`,
    help: 'Latency of webhook delivery attempts, by outcome.',
    labelNames: ['outcome'] as const,
    buckets: [...buckets],
    registers,
  });
  for (const outcome of Object.values(OUTCOME)) {
    attempts.inc({ outcome }, 0);
    duration.zero({ outcome });
  }
  const queue = queueDepth(db, options.schema === undefined ? {} : { schema: options.schema });
  const gauge = (name: string, help: string, pick: (q: Awaited<ReturnType<typeof queue>>) => number) =>
    new Gauge({
      name: `${prefix}${name}`,
      help,
      registers,
      async collect() {
        this.set(pick(await queue()));
      },
    });
  gauge('deliveries_due', 'Deliveries due now and not leased, on active endpoints.', (q) => q.due);
  gauge('deliveries_in_flight', 'Deliveries leased by a worker right now.', (q) => q.inFlight);
  gauge('deliveries_dead', 'Deliveries that used every attempt (dead letters).', (q) => q.dead);
  gauge(
    'delivery_oldest_due_age_seconds',
    'How long the oldest due delivery on an active endpoint has waited (0 when none is due).',
    (q) => q.oldestDueSeconds,
  );
  new Gauge({
    name: `${prefix}endpoint_concurrency_limit`,
    help: 'The adaptive in-flight limit of endpoints the sender holds below their ceiling (at most 100, the most throttled first).',
    labelNames: ['endpoint'] as const,
    registers,
    async collect() {
      this.reset();
      for (const row of await db.query<{ endpoint_id: string; concurrency_limit: number }>(throttled))
        this.set({ endpoint: row.endpoint_id }, row.concurrency_limit);
    },
  });
  return {
    onAttempt(info) {
      const outcome = OUTCOME[info.outcome];
      attempts.inc({ outcome });
      duration.observe({ outcome }, info.latencyMs / 1000);
    },
  };
}
