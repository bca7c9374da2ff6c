// The finished history bench/history fills, in one place: the column lists follow
// @holdfast/webhook-delivery's tables (migrations 001-005). A schema change that renames or adds
// a required column, or partitions the tables (a partition must exist for every day filled),
// is adapted here and nowhere else.
import type { Sql } from 'postgres';

/** The account the history belongs to. */
export const HISTORY_ACCOUNT = 'acct_history';
/** The event type of the filled history. */
export const HISTORY_TYPE = 'order.paid';

/** The id of the n-th filled delivery (1-based): the attempt log is read by these. */
export const historyDeliveryId = (n: number): string => `dlv_h${String(n).padStart(10, '0')}`;

/**
 * Fills `rows` rows of finished history: a third each of events, deliveries and attempts (one
 * delivery per event, one attempt per delivery), spread evenly over the 30 days before `until`
 * and over `endpoints` (round robin); 1 in 100 deliveries dead after a 500, the rest succeeded.
 * Each table is one `INSERT ... SELECT generate_series`; returns the deliveries filled.
 */
export async function fillHistory(
  sql: Sql,
  { rows, endpoints, until }: { rows: number; endpoints: readonly string[]; until: Date },
): Promise<number> {
  const n = Math.floor(rows / 3);
  if (n === 0) return 0;
  const values = [n, until.toISOString(), endpoints as string[], HISTORY_ACCOUNT, HISTORY_TYPE];
  // The n-th row's time: the 30 days before `until`, oldest first.
  const at = `($2::timestamptz - interval '30 days' + (g::float8 / $1::int) * interval '30 days')`;
  const id = (prefix: string) => `'${prefix}' || lpad(g::text, 10, '0')`;
  await sql.unsafe(
    `insert into holdfast_events (id, account_id, type, resource_id, sequence, payload, created_at)
     select ${id('evt_h')}, $3::text, $4::text, 'ord_h' || g, 1,
       '{"type":"' || $4::text || '","data":{"object":{"id":"ord_h' || g || '","amount":500}}}', ${at}
     from generate_series(1, $1::int) g`,
    [n, until.toISOString(), HISTORY_ACCOUNT, HISTORY_TYPE],
  );
  await sql.unsafe(
    `insert into holdfast_deliveries (id, account_id, event_id, endpoint_id, event_type, status,
       attempt_count, next_attempt_at, last_attempt_at, last_status, created_at, updated_at)
     select ${id('dlv_h')}, $4::text, ${id('evt_h')}, ($3::text[])[1 + g % cardinality($3::text[])], $5::text,
       case when g % 100 = 0 then 'dead' else 'succeeded' end, 1, null, ${at},
       case when g % 100 = 0 then 500 else 200 end, ${at}, ${at}
     from generate_series(1, $1::int) g`,
    values,
  );
  await sql.unsafe(
    `insert into holdfast_delivery_attempts (id, delivery_id, account_id, endpoint_id, status, error,
       latency_ms, response_body_prefix, created_at)
     select ${id('att_h')}, ${id('dlv_h')}, $4::text, ($3::text[])[1 + g % cardinality($3::text[])],
       case when g % 100 = 0 then 500 else 200 end, null, 20 + g % 50, null, ${at}
     from generate_series(1, $1::int) g`,
    values.slice(0, 4),
  );
  return n;
}
