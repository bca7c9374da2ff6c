import type { Db } from '@holdfast/db';
import { unlessRunning } from '@holdfast/db';
import { purgeKeys, statements } from './sql';

/** Options of {@link schedulePurge}. */
export interface SchedulePurgeOptions {
  /** The schema `migrations({ schema })` put the table in. @defaultValue the unqualified name */
  schema?: string;
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
 * Deletes expired keys every `intervalMs` in the background, on `db` (the pool): small batches,
 * each its own short statement that skips rows a request has locked, so requests never wait
 * behind it. A purge still running when the next is due skips that one (purges never run two
 * at once nor queue up). The timer does not keep the process alive. Returns `stop()`, which
 * also waits for a purge in progress. Give it a pool with a `statement_timeout` to bound each
 * batch too.
 *
 * @example
 * ```ts
 * const purger = schedulePurge(fromPg(pool), { intervalMs: 5 * 60_000 });
 * process.on('SIGTERM', () => void purger.stop());
 * ```
 */
export function schedulePurge(db: Db, options: SchedulePurgeOptions = {}): { stop(): Promise<void> } {
  const intervalMs = options.intervalMs ?? 60_000;
  if (!Number.isInteger(intervalMs) || intervalMs < 1)
    throw new RangeError('intervalMs must be a positive integer');
  const batchSize = options.batchSize ?? 500;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new RangeError('batchSize must be a positive integer');
  const { now = Date.now } = options;
  const sql = statements(options.schema);
  const onError = options.onError ?? ((error: unknown) => console.error('idempotency purge failed:', error));
  // A purge still running when the next is due: that tick is skipped (queued purges would pile up).
  const purge = unlessRunning(() => purgeKeys(db, sql, new Date(now()), batchSize), onError);
  const timer = setInterval(() => purge.tick(), intervalMs);
  if (typeof timer === 'object' && 'unref' in timer) timer.unref();
  return {
    stop() {
      clearInterval(timer);
      return purge.idle();
    },
  };
}
