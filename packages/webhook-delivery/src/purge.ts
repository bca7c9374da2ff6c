import type { Db } from '@holdfast/db';
import { fromPostgres } from '@holdfast/db/postgres';
import type postgres from 'postgres';
import { DAY_MS } from './health';

// One statement each, for every driver: $1 the cutoff, $2 the batch size.
const PURGE_ATTEMPTS = `
delete from holdfast_delivery_attempts where id in (
  select id from holdfast_delivery_attempts where created_at < $1::timestamptz limit $2::int for update skip locked)
returning id`;
const PURGE_EVENTS = `
delete from holdfast_events where id in (
  select e.id from holdfast_events e
  where e.created_at < $1::timestamptz
    and not exists (select 1 from holdfast_deliveries d where d.event_id = e.id and d.status in ('pending', 'failed'))
  limit $2::int for update skip locked)
returning id`;

/**
 * Deletes delivered history older than `olderThanMs` (default 30 days) in small batches that
 * skip locked rows, so it never blocks delivery: attempts first, then events whose every
 * delivery is finished (their deliveries go with them). Takes a postgres.js pool or any
 * {@link Db} (`fromPg(pool)`), so a service on node-postgres, Drizzle, Kysely or Prisma purges
 * with its own driver.
 *
 * @example
 * ```ts
 * const removed = await purgeDeliveryHistory(sql, { olderThanMs: 7 * 86_400_000 });
 * const alsoRemoved = await purgeDeliveryHistory(fromPg(pool));
 * ```
 */
export async function purgeDeliveryHistory(
  sql: postgres.Sql | Db,
  options: { olderThanMs?: number; batchSize?: number; now?: () => number } = {},
): Promise<number> {
  const db = 'query' in sql && typeof sql !== 'function' ? sql : fromPostgres(sql);
  const before = new Date((options.now ?? Date.now)() - (options.olderThanMs ?? 30 * DAY_MS)).toISOString();
  const batch = options.batchSize ?? 500;
  let removed = 0;
  for (const statement of [PURGE_ATTEMPTS, PURGE_EVENTS]) {
    for (;;) {
      const rows = await db.query(statement, [before, batch]);
      removed += rows.length;
      if (rows.length < batch) break;
    }
  }
  return removed;
}
