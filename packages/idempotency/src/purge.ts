import { unlessRunning } from '@holdfast/db';
import type { IdempotencyStore } from './store';

/** Options of {@link schedulePurge}. */
export interface SchedulePurgeOptions {
  /** Time between purges. @defaultValue 60 000 ms */
  intervalMs?: number;
  /** Rows deleted per statement. @defaultValue 500 */
  batchSize?: number;
  /** The clock, in milliseconds since the epoch. @defaultValue `Date.now` */
  now?: () => number;
  /** Called when a purge fails (the next one still runs). @defaultValue `console.error` */
  onError?: (error: unknown) => void;
}

/**
 * Purges expired keys every `intervalMs` in the background: small batches, each its own short
 * statement, so requests never wait behind it. A purge still running when the next is due skips
 * that one (purges never run two at once nor queue up). The timer does not keep the process
 * alive. Returns `stop()`, which also waits for a purge in progress. On PostgreSQL, give the
 * store a pool with a `statement_timeout` to bound each batch too.
 *
 * @example
 * ```ts
 * const purger = schedulePurge(postgresIdempotencyStore(sql), { intervalMs: 5 * 60_000 });
 * process.on('SIGTERM', () => void purger.stop());
 * ```
 */
export function schedulePurge(
  store: IdempotencyStore,
  options: SchedulePurgeOptions = {},
): { stop(): Promise<void> } {
  const intervalMs = options.intervalMs ?? 60_000;
  if (!Number.isInteger(intervalMs) || intervalMs < 1)
    throw new RangeError('intervalMs must be a positive integer');
  const { now = Date.now } = options;
  const onError = options.onError ?? ((error: unknown) => console.error('idempotency purge failed:', error));
  // A purge still running when the next is due: that tick is skipped (queued purges would pile up).
  const purge = unlessRunning(
    () =>
      store.purge({
        now: new Date(now()),
        ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
      }),
    onError,
  );
  const timer = setInterval(() => purge.tick(), intervalMs);
  if (typeof timer === 'object' && 'unref' in timer) timer.unref();
  return {
    stop() {
      clearInterval(timer);
      return purge.idle();
    },
  };
}
