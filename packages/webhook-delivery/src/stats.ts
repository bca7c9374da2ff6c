import type { Db } from '@holdfast/db';
import type { DeliveryOptions } from './options';
import { pgArray } from './pg-array';
import { storeStatements } from './sql/store';

/** The two windows of {@link endpointStats}: 24 hourly buckets, or 7 daily ones. */
export type StatsWindow = '24h' | '7d';

/** One bucket of attempts: counts by outcome and latency percentiles (ms, `null` when empty). */
export interface StatsBucket {
  /** Start of the bucket (RFC 3339, UTC), inclusive. */
  readonly start: string;
  /** End of the bucket, exclusive. */
  readonly end: string;
  /** Attempts answered 2xx. */
  readonly succeeded: number;
  /** Attempts that failed and were (or will be) retried. */
  readonly failed: number;
  /** Attempts that failed and were the last of their delivery (it is dead). */
  readonly dead: number;
  readonly p50LatencyMs: number | null;
  readonly p95LatencyMs: number | null;
}

/** An endpoint's health over a window, oldest bucket first. */
export interface EndpointStats {
  readonly window: StatsWindow;
  readonly bucketSize: 'hour' | 'day';
  readonly from: string;
  readonly to: string;
  readonly buckets: StatsBucket[];
}

const HOUR = 3_600_000;
const DAY = 86_400_000;

/**
 * Attempts to one endpoint per hour over the last 24 hours (`24h`) or per UTC day over the last
 * 7 days (`7d`), by outcome, with p50 and p95 latency per bucket: what a health chart draws.
 * Buckets are aligned (whole hours, whole UTC days) and the last one holds now; every bucket is
 * present, empty ones with zeros. An attempt is `succeeded` when it got a 2xx, `dead` when it
 * was the last attempt of a delivery that is now dead, else `failed`. Resolves `undefined` when
 * the account has no such endpoint.
 *
 * @example
 * ```ts
 * const stats = await endpointStats(db, { account: 'acct_1', endpointId: 'we_...', window: '24h' });
 * stats?.buckets.at(-1); // { start, end, succeeded, failed, dead, p50LatencyMs, p95LatencyMs }
 * ```
 */
export async function endpointStats(
  db: Db,
  input: {
    account: string;
    endpointId: string;
    window: StatsWindow;
    /** Count only attempts of deliveries of these event types (absent: every type). */
    eventTypes?: readonly string[] | undefined;
  },
  options: DeliveryOptions = {},
): Promise<EndpointStats | undefined> {
  const statements = storeStatements(options.schema);
  const [endpoint] = await db.query(statements.endpointExists, [input.endpointId, input.account]);
  if (!endpoint) return undefined;
  const size = input.window === '24h' ? HOUR : DAY;
  const count = input.window === '24h' ? 24 : 7;
  const now = (options.now ?? Date.now)();
  const to = Math.floor(now / size) * size + size;
  const from = to - count * size;
  const rows = await db.query<{
    i: number;
    succeeded: number;
    failed: number;
    dead: number;
    p50: number | null;
    p95: number | null;
  }>(statements.stats, [
    new Date(from).toISOString(),
    size,
    input.endpointId,
    input.account,
    new Date(to).toISOString(),
    input.eventTypes === undefined ? null : pgArray(input.eventTypes),
  ]);
  const byIndex = new Map(rows.map((row) => [row.i, row]));
  const round = (value: number | null | undefined) =>
    value === null || value === undefined ? null : Math.round(value);
  return {
    window: input.window,
    bucketSize: input.window === '24h' ? 'hour' : 'day',
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    buckets: Array.from({ length: count }, (_, i) => {
      const row = byIndex.get(i);
      return {
        start: new Date(from + i * size).toISOString(),
        end: new Date(from + (i + 1) * size).toISOString(),
        succeeded: row?.succeeded ?? 0,
        failed: row?.failed ?? 0,
        dead: row?.dead ?? 0,
        p50LatencyMs: round(row?.p50),
        p95LatencyMs: round(row?.p95),
      };
    }),
  };
}
