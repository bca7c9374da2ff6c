import type { Db } from '@holdfast/db';
import { DAY_MS } from './health';
import type { DeliveryOptions } from './options';
import { storeStatements } from './sql/store';

/** Options of {@link maintainDeliveryHistory}. */
export interface HistoryOptions extends DeliveryOptions {
  /**
   * How many days of history to keep: a partition is dropped once its whole time range is
   * older than this. @defaultValue 30
   */
  readonly retentionDays?: number | undefined;
  /**
   * The days one new partition covers (aligned on the Unix epoch, in UTC). Partitions made
   * before a change keep their range. @defaultValue 1
   */
  readonly partitionDays?: number | undefined;
  /** How many days ahead partitions are made, so none is missing when its time comes. @defaultValue 7 */
  readonly aheadDays?: number | undefined;
}

/** What one {@link maintainDeliveryHistory} run did. */
export interface HistoryMaintenance {
  /** The partitions made (ahead, or for rows written while none existed for their time). */
  readonly created: string[];
  /** The partitions dropped, whole, behind the retention. */
  readonly dropped: string[];
  /**
   * The partitions behind the retention that stay, for now: each with why (`unfinished`: it
   * holds an unfinished delivery, the event of a delivery still kept or an attempt of an
   * unfinished delivery; `busy`: its table's lock was not had in time).
   */
  readonly kept: { partition: string; reason: 'unfinished' | 'busy' }[];
  /**
   * Whether a step gave up waiting for a lock (a table busy with long reads or writes): what it
   * had to make or drop is left for the next run, which should then come soon (in a minute,
   * not an hour).
   */
  readonly busy: boolean;
}

/** One partition of the history tables and its time range (epoch ms; null for a default partition). */
export interface HistoryPartition {
  /** The history table: `holdfast_events`, `holdfast_deliveries` or `holdfast_delivery_attempts`. */
  readonly table: string;
  /** The partition's table name (`<table>_pYYYYMMDD`, or `<table>_default`). */
  readonly partition: string;
  /** Where its range starts (epoch ms, included); null for the default partition. */
  readonly fromMs: number | null;
  /** Where its range ends (epoch ms, excluded); null for the default partition. */
  readonly toMs: number | null;
}

const TABLES = ['holdfast_deliveries', 'holdfast_events', 'holdfast_delivery_attempts'] as const;

function positive(name: string, value: number | undefined, fallback: number): number {
  const n = value ?? fallback;
  if (!Number.isInteger(n) || n < (name === 'aheadDays' ? 0 : 1))
    throw new TypeError(
      `${name} must be a whole number of days${name === 'aheadDays' ? '' : ' of at least 1'}`,
    );
  return n;
}

/** How many more times a step that gave up for want of a lock is run, each after a short pause. */
const RETRIES = 2;
const BUSY = new Set(['busy', 'kept: busy']);

/**
 * Runs `step` (one statement) again while it reports a lock not had, up to {@link RETRIES}
 * times after a pause (a lock held by a short statement is free by then; the statement holds
 * no lock meanwhile); returns what every run made or dropped and the last run's other rows.
 */
async function retried<Row extends { action: string }>(step: () => Promise<Row[]>): Promise<Row[]> {
  const done: Row[] = [];
  for (let attempt = 0; ; attempt++) {
    const rows = await step();
    if (attempt === RETRIES || !rows.some((row) => BUSY.has(row.action))) return [...done, ...rows];
    done.push(...rows.filter((row) => row.action === 'created' || row.action === 'dropped'));
    await new Promise((resolve) => setTimeout(resolve, 100 * (attempt + 1)));
  }
}

/**
 * Keeps the sender's history (events, deliveries, attempts: tables partitioned by time) within
 * its retention without deleting a row: makes the partitions of the coming `aheadDays`, moves
 * any rows written while no partition covered their time out of the default partitions, then
 * detaches and drops every partition whose whole range is older than `retentionDays`. A
 * partition holding an unfinished delivery (pending or failed: due, waiting or leased), the
 * event of a delivery still kept, or an attempt of an unfinished delivery stays until a later
 * run finds it free, so a delivery retrying for days is never lost. Runs one short
 * transaction per table and step, one maintenance at a time per schema; run it from a periodic job (hourly is
 * plenty, and once before the workers start), with the same `schema` as the worker, each
 * statement in a transaction of its own.
 *
 * It never holds back the workers and writers for long, nor makes one of them a deadlock's
 * victim: when the partitions ahead exist and no row waits in a default partition (the usual
 * run) it takes no lock that anything but another maintenance waits for; otherwise it takes its
 * locks before its work, in the lease's order (the endpoints, a table, then its partitions), and
 * waits at most a tenth of a second for each, far less than PostgreSQL waits before it looks for
 * a deadlock, then gives up; a step that gave up runs again twice after a short pause, and if
 * it still could not, the run reports `busy` and leaves the work to the next run.
 *
 * @throws TypeError when a number of days is not a whole number (of at least 1, or 0 for `aheadDays`).
 * @example
 * ```ts
 * const done = await maintainDeliveryHistory(fromPg(pool), { retentionDays: 30 });
 * // done.dropped: the partitions gone, done.kept: those behind the retention still needed
 * ```
 */
export async function maintainDeliveryHistory(
  db: Db,
  options: HistoryOptions = {},
): Promise<HistoryMaintenance> {
  const retentionDays = positive('retentionDays', options.retentionDays, 30);
  const partitionDays = positive('partitionDays', options.partitionDays, 1);
  const aheadDays = positive('aheadDays', options.aheadDays, 7);
  const now = (options.now ?? Date.now)();
  const statements = storeStatements(options.schema);
  // One table a statement (a transaction of its own), deliveries before their events.
  const created: { partition: string | null; action: string }[] = [];
  for (const table of TABLES)
    created.push(
      ...(await retried(() =>
        db.query<{ partition: string | null; action: string }>(statements.historyEnsure, [
          table,
          new Date(now).toISOString(),
          new Date(now + aheadDays * DAY_MS).toISOString(),
          partitionDays,
        ]),
      )),
    );
  const expired: { partition: string; action: string }[] = [];
  for (const table of TABLES)
    expired.push(
      ...(await retried(() =>
        db.query<{ partition: string; action: string }>(statements.historyExpire, [
          table,
          new Date(now - retentionDays * DAY_MS).toISOString(),
        ]),
      )),
    );
  return {
    created: created.flatMap((row) => (row.action === 'created' && row.partition ? [row.partition] : [])),
    dropped: expired.filter((row) => row.action === 'dropped').map((row) => row.partition),
    kept: expired
      .filter((row) => row.action !== 'dropped')
      .map((row) => ({
        partition: row.partition,
        reason: row.action === 'kept: busy' ? 'busy' : 'unfinished',
      })),
    busy: created.some((row) => row.action === 'busy') || expired.some((row) => row.action === 'kept: busy'),
  };
}

/**
 * The partitions of the history tables (`holdfast_events`, `holdfast_deliveries`,
 * `holdfast_delivery_attempts`), oldest first per table, the default partition of each first.
 *
 * @example
 * ```ts
 * const partitions = await deliveryHistoryPartitions(fromPg(pool));
 * ```
 */
export async function deliveryHistoryPartitions(
  db: Db,
  options: DeliveryOptions = {},
): Promise<HistoryPartition[]> {
  const rows = await db.query<{
    parent: string;
    partition: string;
    from_ms: number | null;
    to_ms: number | null;
  }>(storeStatements(options.schema).historyPartitions);
  return rows.map((row) => ({
    table: row.parent,
    partition: row.partition,
    fromMs: row.from_ms === null ? null : Number(row.from_ms),
    toMs: row.to_ms === null ? null : Number(row.to_ms),
  }));
}
