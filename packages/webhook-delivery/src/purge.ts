import type { Db } from '@holdfast/db';
import { DAY_MS } from './health';
import { maintainDeliveryHistory } from './history';
import type { DeliveryOptions } from './options';

/**
 * Applies the history's retention: {@link maintainDeliveryHistory} with `retentionDays` of
 * `olderThanMs` (default 30 days, rounded up to whole days). History is dropped a whole time
 * partition at a time, never row by row; resolves with how many partitions it dropped.
 *
 * @deprecated Use {@link maintainDeliveryHistory}, which also says what it kept and why.
 * @example
 * ```ts
 * const dropped = await purgeDeliveryHistory(fromPg(pool), { olderThanMs: 7 * 86_400_000 });
 * ```
 */
export async function purgeDeliveryHistory(
  db: Db,
  options: DeliveryOptions & {
    olderThanMs?: number;
    /** Ignored: history is dropped by partition, not in batches of rows. */
    batchSize?: number;
  } = {},
): Promise<number> {
  const retentionDays = Math.max(1, Math.ceil((options.olderThanMs ?? 30 * DAY_MS) / DAY_MS));
  const done = await maintainDeliveryHistory(db, { schema: options.schema, now: options.now, retentionDays });
  return done.dropped.length;
}
