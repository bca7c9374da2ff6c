import type postgres from 'postgres';

/** One delivery attempt as the metrics count it. */
export interface AttemptRecord {
  readonly outcome: 'succeeded' | 'failed' | 'dead';
  readonly latencyMs: number;
  /** When it finished. */
  readonly at: Date;
  /** The HTTP status, or null when no answer came. */
  readonly status: number | null;
}

/** New attempts from the attempt log, each returned once. */
export interface AttemptFeed {
  next(): Promise<AttemptRecord[]>;
}

const BATCH = 10_000;

/**
 * Reads the attempt log forward from `since` (ms): each call returns the attempts written since
 * the previous one. An attempt is `succeeded` when it got a 2xx, `dead` when it was the last of
 * a dead delivery, else `failed`. This stands in for a worker hook (`onAttempt`) in processes
 * running the workers: the log is what every worker writes, so the counts are the cluster's.
 *
 * @example
 * ```ts
 * const feed = attemptFeed(sql, Date.now());
 * for (const a of await feed.next()) counter.inc({ outcome: a.outcome });
 * ```
 */
export function attemptFeed(sql: postgres.Sql, since: number): AttemptFeed {
  let after = { at: new Date(since), id: '' };
  return {
    async next() {
      const rows = await sql<
        { id: string; created_at: Date; status: number | null; latency_ms: number; dead: boolean }[]
      >`
        select a.id, a.created_at, a.status, a.latency_ms,
          (d.status = 'dead' and not exists (
            select 1 from holdfast_delivery_attempts later
            where later.delivery_id = a.delivery_id and (later.created_at, later.id) > (a.created_at, a.id)
          )) as dead
        from holdfast_delivery_attempts a join holdfast_deliveries d on d.id = a.delivery_id
        where (a.created_at, a.id) > (${after.at}, ${after.id})
        order by a.created_at, a.id
        limit ${BATCH}`;
      const last = rows.at(-1);
      if (last) after = { at: last.created_at, id: last.id };
      return rows.map((row) => ({
        outcome:
          row.status !== null && row.status >= 200 && row.status < 300
            ? 'succeeded'
            : row.dead
              ? 'dead'
              : 'failed',
        latencyMs: row.latency_ms,
        at: row.created_at,
        status: row.status,
      }));
    },
  };
}
