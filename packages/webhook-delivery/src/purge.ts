import type postgres from 'postgres';
import { DAY_MS } from './health';

/**
 * Deletes delivered history older than `olderThanMs` (default 30 days) in small batches that
 * skip locked rows, so it never blocks delivery: attempts first, then events whose every
 * delivery is finished (their deliveries go with them).
 *
 * @example
 * ```ts
 * const removed = await purgeDeliveryHistory(sql, { olderThanMs: 7 * 86_400_000 });
 * ```
 */
export async function purgeDeliveryHistory(
  sql: postgres.Sql,
  options: { olderThanMs?: number; batchSize?: number; now?: () => number } = {},
): Promise<number> {
  const before = new Date((options.now ?? Date.now)() - (options.olderThanMs ?? 30 * DAY_MS));
  const batch = options.batchSize ?? 500;
  let removed = 0;
  for (;;) {
    const rows = await sql`
      delete from holdfast_delivery_attempts where id in (
        select id from holdfast_delivery_attempts where created_at < ${before} limit ${batch} for update skip locked)
      returning id`;
    removed += rows.length;
    if (rows.length < batch) break;
  }
  for (;;) {
    const rows = await sql`
      delete from holdfast_events where id in (
        select e.id from holdfast_events e
        where e.created_at < ${before}
          and not exists (select 1 from holdfast_deliveries d where d.event_id = e.id and d.status in ('pending', 'failed'))
        limit ${batch} for update skip locked)
      returning id`;
    removed += rows.length;
    if (rows.length < batch) break;
  }
  return removed;
}
