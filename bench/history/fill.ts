// The finished history bench/history fills, in one place: the column lists follow
// @holdfast/webhook-delivery's tables (migrations 001-010: events, deliveries and attempts
// range-partitioned by day on `created_at`, unfinished work in `holdfast_delivery_queue`). A
// schema change that renames or adds a required column is adapted here and nowhere else.
//
// The partitions of the filled days are made by the package's own maintenance
// (`maintainDeliveryHistory`), then each one is filled on its own: detached, stripped of its
// indexes and keys, filled by one `INSERT ... SELECT generate_series`, and attached again, which
// builds its indexes in one pass each and gives it back the parent's keys, foreign key and
// triggers (a detached partition has no trigger, so no filled row reaches the queue; the fill
// checks that the queue is empty after). What the bench measures reads the same partitions,
// indexes and triggers as history the package wrote itself, with none of the bloat of a live
// system.
import type { Db } from '@holdfast/db';
import { deliveryHistoryPartitions, maintainDeliveryHistory } from '@holdfast/webhook-delivery';
import type { Sql } from 'postgres';

const DAY_MS = 86_400_000;
/** The days filled: the 30 whole UTC days before `until`. */
export const FILLED_DAYS = 30;

/** The account the history belongs to. */
export const HISTORY_ACCOUNT = 'acct_history';
/** The event type of the filled history. */
export const HISTORY_TYPE = 'order.paid';

/** The start of the UTC day holding `ms`: the fill ends there, and retention is run from it. */
export const utcDay = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;

/**
 * When the n-th (1-based) of `total` filled deliveries, its event and its attempt were written
 * (epoch ms): spread evenly over the 30 days before `until`, oldest first. Integer arithmetic,
 * the same in the fill's SQL (`AT_MS`), so ids computed here name filled rows.
 */
function filledAtMs(n: number, total: number, until: number): number {
  const span = BigInt(FILLED_DAYS * DAY_MS);
  return until - FILLED_DAYS * DAY_MS + Number((BigInt(n - 1) * span) / BigInt(total));
}

/**
 * The id of the n-th filled delivery of `total`: a timed id as the fan-out makes them (`dlv_`,
 * 12 hex digits of its creation's Unix milliseconds, version 7, the variant, then `n` in hex),
 * so a read by id finds its partition, as it does for the package's own deliveries.
 */
export const historyDeliveryId = (n: number, total: number, until: number): string =>
  `dlv_${filledAtMs(n, total, until).toString(16).padStart(12, '0')}70008${n.toString(16).padStart(15, '0')}`;

/** The n-th row's creation time in SQL (`g` the row, $1 the total, $2 the first day's epoch ms). */
const AT_MS = `($2::bigint + (g - 1)::bigint * ${FILLED_DAYS * DAY_MS}::bigint / $1::bigint)`;
const AT = `(timestamptz 'epoch' + ${AT_MS} * interval '1 millisecond')`;
const id = (prefix: string) => `'${prefix}' || lpad(g::text, 10, '0')`;
const DELIVERY_ID = `'dlv_' || lpad(to_hex(${AT_MS}), 12, '0') || '70008' || lpad(to_hex(g), 15, '0')`;

/** Each table's fill of rows $3..$4 (`g`), $5 the endpoints (not the events'). */
const FILLS: Record<string, string> = {
  holdfast_events: `(id, account_id, type, resource_id, sequence, payload, created_at)
     select ${id('evt_h')}, '${HISTORY_ACCOUNT}', '${HISTORY_TYPE}', 'ord_h' || g, 1,
       '{"type":"' || '${HISTORY_TYPE}' || '","data":{"object":{"id":"ord_h' || g || '","amount":500}}}', ${AT}
     from generate_series($3::int, $4::int) g`,
  holdfast_deliveries: `(id, account_id, event_id, endpoint_id, event_type, status,
       attempt_count, next_attempt_at, last_attempt_at, last_status, created_at, updated_at)
     select ${DELIVERY_ID}, '${HISTORY_ACCOUNT}', ${id('evt_h')}, ($5::text[])[1 + g % cardinality($5::text[])], '${HISTORY_TYPE}',
       case when g % 100 = 0 then 'dead' else 'succeeded' end, 1, null, ${AT},
       case when g % 100 = 0 then 500 else 200 end, ${AT}, ${AT}
     from generate_series($3::int, $4::int) g`,
  holdfast_delivery_attempts: `(id, delivery_id, account_id, endpoint_id, status, error,
       latency_ms, response_body_prefix, created_at)
     select ${id('att_h')}, ${DELIVERY_ID}, '${HISTORY_ACCOUNT}', ($5::text[])[1 + g % cardinality($5::text[])],
       case when g % 100 = 0 then 500 else 200 end, null, 20 + g % 50, null, ${AT}
     from generate_series($3::int, $4::int) g`,
};

/**
 * Fills `rows` rows of finished history: a third each of events, deliveries and attempts (one
 * delivery per event, one attempt per delivery), spread evenly over the 30 whole UTC days before
 * `until` (a day's start) and over `endpoints` (round robin); 1 in 100 deliveries dead after a
 * 500, the rest succeeded. First the package's maintenance makes the partitions from the first
 * filled day to a week after `until` (so the bench's own deliveries, written now, land in
 * partitions of their days too); then each day's partition of each table is filled on its own
 * (see the top). Returns the deliveries filled.
 */
export async function fillHistory(
  sql: Sql,
  db: Db,
  { rows, endpoints, until }: { rows: number; endpoints: readonly string[]; until: number },
): Promise<number> {
  if (until !== utcDay(until)) throw new Error('fillHistory: `until` must be the start of a UTC day');
  const first = until - FILLED_DAYS * DAY_MS;
  const made = await maintainDeliveryHistory(db, {
    now: () => first,
    aheadDays: FILLED_DAYS + 8,
    retentionDays: 3650,
  });
  if (made.busy) throw new Error('fillHistory: the maintenance found the history tables busy');
  const n = Math.floor(rows / 3);
  if (n === 0) return 0;
  const partitions = await deliveryHistoryPartitions(db);
  for (const [table, fill] of Object.entries(FILLS)) {
    for (let day = 0; day < FILLED_DAYS; day += 1) {
      const from = first + day * DAY_MS;
      const part = partitions.find((p) => p.table === table && p.fromMs === from);
      if (!part || part.toMs !== from + DAY_MS)
        throw new Error(`fillHistory: no one-day partition of ${table} from ${new Date(from).toISOString()}`);
      // Rows lo..hi are those whose time falls in this day (see filledAtMs).
      const lo = Math.ceil((day * n) / FILLED_DAYS) + 1;
      const hi = Math.ceil(((day + 1) * n) / FILLED_DAYS);
      if (hi < lo) continue;
      await sql.begin(async (tx) => {
        // Nothing here is worth a flush per commit, and an index build sorts in memory.
        await tx.unsafe(`set local synchronous_commit = off`);
        await tx.unsafe(`set local maintenance_work_mem = '256MB'`);
        await tx.unsafe(`alter table ${table} detach partition ${part.partition}`);
        // The keys first (their indexes go with them), then the other indexes.
        const keys = await tx.unsafe<{ conname: string }[]>(
          `select conname from pg_constraint where conrelid = $1::regclass and contype in ('p', 'u', 'f')`,
          [part.partition],
        );
        for (const { conname } of keys)
          await tx.unsafe(`alter table ${part.partition} drop constraint "${conname}"`);
        const indexes = await tx.unsafe<{ name: string }[]>(
          `select indexrelid::regclass::text as name from pg_index where indrelid = $1::regclass`,
          [part.partition],
        );
        for (const { name } of indexes) await tx.unsafe(`drop index ${name}`);
        const values = [n, first, lo, hi, endpoints as string[]];
        await tx.unsafe(
          `insert into ${part.partition} ${fill}`,
          (table === 'holdfast_events' ? values.slice(0, 4) : values) as never[],
        );
        await tx.unsafe(
          `alter table ${table} attach partition ${part.partition}
           for values from ('${new Date(from).toISOString()}') to ('${new Date(from + DAY_MS).toISOString()}')`,
        );
      });
    }
  }
  // Finished history only: nothing to do may reach the queue tables.
  const [queued] = await sql<{ n: number }[]>`
    select (select count(*) from holdfast_delivery_queue)::int
         + (select count(*) from holdfast_endpoint_wakes)::int as n`;
  if (queued?.n !== 0) throw new Error(`fillHistory: the fill left ${queued?.n} rows in the queue tables`);
  return n;
}
