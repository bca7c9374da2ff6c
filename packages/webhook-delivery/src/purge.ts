import type { Db } from '@holdfast/db';
import { DAY_MS } from './health';
import type { DeliveryOptions } from './options';
import { storeStatements } from './sql/store';

/**
 * Deletes delivered history older than `olderThanMs` (default 30 days) in small batches that
 * skip locked rows, so it never blocks delivery: attempts first, then events whose every
 * delivery is finished (their deliveries go with them). Resolves with how many rows it removed.
 *
 * @example
 * ```ts
 * const removed = await purgeDeliveryHistory(fromPg(pool), { olderThanMs: 7 * 86_400_000 });
 * ```
 */
export async function purgeDeliveryHistory(
  db: Db,
  options: DeliveryOptions & { olderThanMs?: number; batchSize?: number } = {},
): Promise<number> {
  const before = new Date((options.now ?? Date.now)() - (options.olderThanMs ?? 30 * DAY_MS)).toISOString();
  const batch = options.batchSize ?? 500;
  const statements = storeStatements(options.schema);
  let removed = 0;
  for (const statement of [statements.purgeAttempts, statements.purgeEvents]) {
    for (;;) {
      const rows = await db.query(statement, [before, batch]);
      removed += rows.length;
      if (rows.length < batch) break;
    }
  }
  return removed;
}
