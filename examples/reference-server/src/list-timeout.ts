import type { Db } from '@holdfast/db';
import type { Database } from './context';

/**
 * How long one list statement may run before PostgreSQL cancels it (answered 503 with
 * Retry-After, as every statement timeout is). Shorter than the API's statement timeout: every
 * accepted sort reads an index and answers in milliseconds (bench/pagination), so a list still
 * running after this long is one that would hold a connection other tenants need.
 */
export const LIST_STATEMENT_TIMEOUT_MS = 2_000;

// The connection's timeout from current_setting (text with a unit, read as an interval):
// pg_settings would build every setting's row on each list, which costs more than the list.
const LIST_TIMEOUT = `select set_config('statement_timeout',
    (case when t.ms = 0 then $1::int else least(t.ms, $1::int) end)::text,
    true)
  from (select (extract(epoch from current_setting('statement_timeout')::interval) * 1000)::int as ms) t`;

/**
 * Runs a list's statements in a transaction under the list timeout: `timeoutMs`, or the
 * connection's own statement timeout when that is shorter (a pool configured tighter stays
 * tighter). The setting is sent ahead of the list's statements, in the same pipeline, and ends
 * with the transaction.
 *
 * @example
 * ```ts
 * const page = await withListTimeout(deps, (db) => paginate(db, { ... }));
 * ```
 */
export async function withListTimeout<T>(
  database: Database,
  list: (db: Db) => Promise<T>,
  timeoutMs: number = LIST_STATEMENT_TIMEOUT_MS,
): Promise<T> {
  const done = await database.transaction(async (_tx, db) => {
    // Together, so a failure of either is handled here and the setting goes out first.
    const [, value] = await Promise.all([db.query(LIST_TIMEOUT, [timeoutMs]), list(db)]);
    return { value };
  });
  return done.value;
}
