import type { Db } from '@holdfast/db';
import { statements } from './statements';

const DAY_MS = 86_400_000;

/** Options of {@link maintainInbox}. */
export interface InboxMaintenanceOptions {
  /** The schema {@link migrations} put the tables in. Default: the connection's `search_path`. */
  schema?: string;
  /** Days an entry is kept at least: partitions wholly older go. Default 30. */
  retentionDays?: number;
  /** Days ahead the partitions are made, so no enqueue waits on one. Default 7. */
  aheadDays?: number;
  /** Days one partition spans (aligned on whole UTC days). Default 1. */
  partitionDays?: number;
  /** Current time in ms. Default `Date.now`. */
  now?: () => number;
}

/** What one {@link maintainInbox} call did, by partition name. */
export interface InboxMaintenance {
  /** Partitions made ahead. */
  created: string[];
  /** Partitions dropped: past retention, no pending entry. */
  dropped: string[];
  /** Partitions past retention kept because an entry in them is still pending. */
  held: string[];
}

function wholeDays(value: number, what: string, least: number): number {
  if (!Number.isSafeInteger(value) || value < least) {
    throw new RangeError(`${what} must be a whole number of days, at least ${least}`);
  }
  return value;
}

/**
 * The inbox's partition maintenance: makes the partitions of the next `aheadDays`, then drops,
 * as whole tables, the partitions wholly older than `retentionDays`, except any holding an entry
 * still `pending` (never processed): retention never deletes a row, and never loses an entry
 * that was not processed. Entries set aside as `failed` go with their partition. Run it once a
 * day or more often (a run with nothing to do reads the catalog only); dropping takes the inbox
 * table's lock for a moment. Needs {@link migrations} applied (with the same `schema`).
 *
 * @example
 * ```ts
 * const { dropped, held } = await maintainInbox(fromPg(pool), { retentionDays: 14 });
 * if (held.length > 0) console.warn(`inbox: ${held.join(', ')} kept for pending entries`);
 * ```
 */
export async function maintainInbox(
  db: Db,
  options: InboxMaintenanceOptions = {},
): Promise<InboxMaintenance> {
  const retention = wholeDays(options.retentionDays ?? 30, 'retentionDays', 1);
  const ahead = wholeDays(options.aheadDays ?? 7, 'aheadDays', 0);
  const width = wholeDays(options.partitionDays ?? 1, 'partitionDays', 1);
  const at = (options.now ?? Date.now)();
  const sql = statements(options.schema);
  const made = await db.query<{ name: string }>(sql.createPartitions, [
    new Date(at).toISOString(),
    new Date(at + ahead * DAY_MS).toISOString(),
    width,
  ]);
  const old = await db.query<{ name: string; dropped: boolean }>(sql.dropPartitions, [
    new Date(at - retention * DAY_MS).toISOString(),
  ]);
  return {
    created: made.map((row) => row.name),
    dropped: old.filter((row) => row.dropped).map((row) => row.name),
    held: old.filter((row) => !row.dropped).map((row) => row.name),
  };
}
