import { unlessRunning } from '@holdfast/db';
import type { ResolvedIdempotencyOptions } from './options';
import type { HeldKey, IdempotencyStore } from './store';

/**
 * Renews the lease of a running handler every third of `leaseMs`, so a handler that is alive
 * but slow keeps its key, while one whose process died loses it after at most one lease.
 * Returns the function that stops the renewal. Renewal failures are ignored: the worst case is
 * the lease running out, which the flows already handle. A renewal still waiting when the next
 * is due skips that one.
 */
export function keepLease(
  store: IdempotencyStore,
  held: HeldKey,
  options: Pick<ResolvedIdempotencyOptions, 'leaseMs' | 'now'>,
): () => void {
  // One renewal at a time: a store slower than the interval is not sent a pile of them.
  const renewal = unlessRunning(
    () => store.extend(held, new Date(options.now() + options.leaseMs)),
    () => {},
  );
  const timer = setInterval(() => renewal.tick(), Math.max(1, Math.floor(options.leaseMs / 3)));
  if (typeof timer === 'object' && 'unref' in timer) timer.unref();
  return () => clearInterval(timer);
}
