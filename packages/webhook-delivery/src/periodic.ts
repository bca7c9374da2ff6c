import type postgres from 'postgres';

/** A periodic job that never runs twice at once: see {@link unlessRunning}. */
export interface GuardedJob {
  /** Starts a run unless the last one is still going; `false` when this tick was skipped. */
  tick(): boolean;
  /** Resolves once no run is in progress. */
  idle(): Promise<void>;
}

/**
 * Wraps a periodic job so that a tick while the last run is still going is skipped rather than
 * started beside it: a job slower than its interval (a statement on stale statistics) runs once
 * at a time instead of piling up. Errors go to `onError`; the next tick runs again.
 *
 * @example
 * ```ts
 * const job = unlessRunning(() => reconcileInFlight(sql), console.error);
 * const timer = setInterval(() => job.tick(), 10_000);
 * ```
 */
export function unlessRunning(run: () => Promise<unknown>, onError: (error: unknown) => void): GuardedJob {
  let current: Promise<void> | undefined;
  return {
    tick() {
      if (current) return false;
      current = Promise.resolve()
        .then(run)
        .then(() => undefined, onError)
        .finally(() => {
          current = undefined;
        });
      return true;
    },
    idle: () => current ?? Promise.resolve(),
  };
}

/** How long one statement of a periodic job may run: it is cut, and the next run tries again. */
export const JOB_STATEMENT_TIMEOUT_MS = 10_000;

/**
 * Runs `work` in a transaction of `sql` whose statements are cut at `ms` (`set_config(...,
 * true)` is `SET LOCAL` with a bound value): a periodic job must end before its next run is due.
 * Resolves to what `work` counted.
 */
export function withStatementTimeout(
  sql: postgres.Sql,
  ms: number,
  work: (tx: postgres.TransactionSql) => Promise<number>,
): Promise<number> {
  return sql.begin(async (tx) => {
    await tx`select set_config('statement_timeout', ${String(Math.max(1, Math.round(ms)))}, true)`;
    return work(tx);
  });
}
