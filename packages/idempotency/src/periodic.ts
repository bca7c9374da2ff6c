/**
 * Wraps a periodic job so that a tick while its last run is still going is skipped rather than
 * started beside it (a slow purge or renewal runs once at a time instead of piling up). Returns
 * the tick, which says whether it started a run, and `idle()`, which resolves once none runs.
 * Errors go to `onError`; the next tick runs again.
 */
export function unlessRunning(
  run: () => Promise<unknown>,
  onError: (error: unknown) => void,
): { tick(): boolean; idle(): Promise<void> } {
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
