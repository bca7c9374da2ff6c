import type postgres from 'postgres';

export { type GuardedJob, unlessRunning } from '@holdfast/db';

/** How long one statement of a periodic job may run: it is cut, and the next run tries again. */
export const JOB_STATEMENT_TIMEOUT_MS = 10_000;

/**
 * Runs `work` in a transaction of `sql` whose statements are cut at `ms` (`set_config(...,
 * true)` is `SET LOCAL` with a bound value): a periodic job must end before its next run is due.
 * Its commit does not wait for the WAL flush (`synchronous_commit` off for the transaction): a
 * job repairs what its next run would repair again, and the pacing rows the reconcile locks
 * must not stay locked through a disk's fsync stall, since every lease skips them meanwhile.
 * Resolves to what `work` counted.
 */
export function withStatementTimeout(
  sql: postgres.Sql,
  ms: number,
  work: (tx: postgres.TransactionSql) => Promise<number>,
): Promise<number> {
  return sql.begin(async (tx) => {
    await tx`
      select set_config('statement_timeout', ${String(Math.max(1, Math.round(ms)))}, true),
             set_config('synchronous_commit', 'off', true)`;
    return work(tx);
  });
}
