import type { ISql as Sql } from 'postgres';
import { pgArray } from './pg-array';

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
 * const stats = await endpointStats(sql, { account: 'acct_1', endpointId: 'we_...', window: '24h' });
 * stats?.buckets.at(-1); // { start, end, succeeded, failed, dead, p50LatencyMs, p95LatencyMs }
 * ```
 */
export async function endpointStats(
  sql: Sql,
  input: {
    account: string;
    endpointId: string;
    window: StatsWindow;
    now?: (() => number) | undefined;
    /** Count only attempts of deliveries of these event types (absent: every type). */
    eventTypes?: readonly string[] | undefined;
  },
): Promise<EndpointStats | undefined> {
  const [endpoint] = await sql`
    select id from holdfast_webhook_endpoints
    where id = ${input.endpointId} and account_id = ${input.account} and deleted_at is null`;
  if (!endpoint) return undefined;
  const size = input.window === '24h' ? HOUR : DAY;
  const count = input.window === '24h' ? 24 : 7;
  const now = (input.now ?? Date.now)();
  const to = Math.floor(now / size) * size + size;
  const from = to - count * size;
  const rows = await sql<
    { i: number; succeeded: number; failed: number; dead: number; p50: number | null; p95: number | null }[]
  >`
    select floor(extract(epoch from (a.created_at - ${new Date(from)}::timestamptz)) * 1000 / ${size})::int as i,
      count(*) filter (where a.outcome = 'succeeded')::int as succeeded,
      count(*) filter (where a.outcome = 'failed')::int as failed,
      count(*) filter (where a.outcome = 'dead')::int as dead,
      percentile_cont(0.5) within group (order by a.latency_ms)::float8 as p50,
      percentile_cont(0.95) within group (order by a.latency_ms)::float8 as p95
    from (
      select a.created_at, a.latency_ms,
        case
          when a.status between 200 and 299 then 'succeeded'
          when d.status = 'dead' and not exists (
            select 1 from holdfast_delivery_attempts later
            where later.delivery_id = a.delivery_id and (later.created_at, later.id) > (a.created_at, a.id)
          ) then 'dead'
          else 'failed'
        end as outcome
      from holdfast_delivery_attempts a
      join holdfast_deliveries d on d.id = a.delivery_id
      where a.endpoint_id = ${input.endpointId} and a.account_id = ${input.account}
        and a.created_at >= ${new Date(from)} and a.created_at < ${new Date(to)}
        and (${input.eventTypes === undefined} or d.event_type = any(${pgArray(input.eventTypes ?? [])}::text[]))
    ) a
    group by 1`;
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
