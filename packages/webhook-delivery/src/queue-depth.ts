import type postgres from 'postgres';

/** The delivery queue at one instant. */
export interface QueueDepth {
  /** Deliveries due now and not leased, on active endpoints. */
  readonly due: number;
  /** Deliveries a worker holds a lease on. */
  readonly inFlight: number;
  /** Deliveries that used every attempt (dead letters). */
  readonly dead: number;
  /** How long the oldest due delivery on an active endpoint has waited; 0 when none is due. */
  readonly oldestDueSeconds: number;
}

/**
 * A reader of the queue's depth: one statement a call, and calls within the same second share one
 * answer, so the four gauges of one scrape cost one query. Read from the database, so every
 * process scraped reports the same numbers.
 *
 * @example
 * ```ts
 * const depth = await queueDepth(sql)(); // { due, inFlight, dead, oldestDueSeconds }
 * ```
 */
export function queueDepth(
  sql: postgres.Sql,
  options: { readonly now?: () => number } = {},
): () => Promise<QueueDepth> {
  const { now = Date.now } = options;
  let last: { at: number; answer: Promise<QueueDepth> } | undefined;
  return () => {
    const at = now();
    if (last && at - last.at < 1000) return last.answer;
    const answer = (async () => {
      const [row] = await sql<{ due: number; in_flight: number; dead: number; oldest: number | null }[]>`
        select
          (select count(*)::int from holdfast_deliveries d join holdfast_webhook_endpoints e on e.id = d.endpoint_id
            where d.status in ('pending', 'failed') and d.next_attempt_at <= now()
              and (d.lease_expires_at is null or d.lease_expires_at < now())
              and e.status = 'active' and e.deleted_at is null) as due,
          (select count(*)::int from holdfast_deliveries
            where status in ('pending', 'failed') and lease_expires_at >= now()) as in_flight,
          (select count(*)::int from holdfast_deliveries where status = 'dead') as dead,
          (select extract(epoch from now() - min(d.next_attempt_at))::float8
            from holdfast_deliveries d join holdfast_webhook_endpoints e on e.id = d.endpoint_id
            where d.status in ('pending', 'failed') and d.next_attempt_at <= now()
              and e.status = 'active' and e.deleted_at is null) as oldest`;
      return {
        due: row?.due ?? 0,
        inFlight: row?.in_flight ?? 0,
        dead: row?.dead ?? 0,
        oldestDueSeconds: Math.max(0, row?.oldest ?? 0),
      };
    })();
    last = { at, answer };
    answer.catch(() => {
      last = undefined;
    });
    return answer;
  };
}
