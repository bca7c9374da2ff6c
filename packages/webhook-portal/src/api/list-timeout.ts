import type { Db, Transaction } from '@holdfast/db';

// The connection's timeout from current_setting (text with a unit, read as an interval):
// pg_settings would build every setting's row on each list, which costs more than the list.
const LIST_TIMEOUT = `select set_config('statement_timeout',
    (case when t.ms = 0 then $1::int else least(t.ms, $1::int) end)::text,
    true)
  from (select (extract(epoch from current_setting('statement_timeout')::interval) * 1000)::int as ms) t`;

/**
 * Runs a list's statements in a transaction under the list timeout: `listTimeoutMs`, or the
 * connection's own statement timeout when that is shorter. A list still running after that
 * long holds a connection other tenants need; PostgreSQL cancels it (answered 503).
 */
export async function withListTimeout<T>(
  database: { readonly transaction: Transaction<unknown>; readonly listTimeoutMs: number },
  list: (db: Db) => Promise<T>,
): Promise<T> {
  const done = await database.transaction(async (_tx, db) => {
    // Together, so a failure of either is handled here and the setting goes out first.
    const [, value] = await Promise.all([db.query(LIST_TIMEOUT, [database.listTimeoutMs]), list(db)]);
    return { value };
  });
  return done.value;
}
