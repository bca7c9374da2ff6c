import type { Db, Transaction } from './index';

// The connection's timeout from current_setting (text with a unit, read as an interval):
// pg_settings would build every setting's row on each call, which costs more than a list.
const SET_TIMEOUT = `select set_config('statement_timeout',
    (case when t.ms = 0 then $1::int else least(t.ms, $1::int) end)::text,
    true)
  from (select (extract(epoch from current_setting('statement_timeout')::interval) * 1000)::int as ms) t`;

/**
 * Runs `work` in a transaction whose statements PostgreSQL cancels (SQLSTATE 57014, which
 * `databaseFailure` reads as `timed_out`) after `timeoutMs`, or after the connection's own
 * `statement_timeout` when that is shorter: a pool configured tighter stays tighter. For a list
 * or a search that must not hold a connection other clients need. The setting is sent ahead of
 * `work`'s statements, in the same pipeline, and ends with the transaction.
 *
 * @example
 * ```ts
 * const page = await withStatementTimeout(pgTransaction(pool), 2000, (db) => db.query('select ...'));
 * ```
 */
export async function withStatementTimeout<T>(
  transaction: Transaction<unknown>,
  timeoutMs: number,
  work: (db: Db) => Promise<T>,
): Promise<T> {
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
    throw new RangeError(`timeoutMs must be a positive integer of milliseconds, got ${timeoutMs}`);
  const done = await transaction(async (_tx, db) => {
    // Together, so a failure of either is handled here and the setting goes out first.
    const [, value] = await Promise.all([db.query(SET_TIMEOUT, [timeoutMs]), work(db)]);
    return { value };
  });
  return done.value;
}
