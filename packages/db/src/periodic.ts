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
 * const job = unlessRunning(() => purgeExpired(db), console.error);
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
