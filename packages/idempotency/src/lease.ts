import type { ResolvedIdempotencyOptions } from './options';
import type { HeldKey, IdempotencyStore } from './store';

/**
 * Renews the lease of a running handler every third of `leaseMs`, so a handler that is alive
 * but slow keeps its key, while one whose process died loses it after at most one lease.
 * Returns the function that stops the renewal. Renewal failures are ignored: the worst case is
 * the lease running out, which the flows already handle.
 */
export function keepLease(
  store: IdempotencyStore,
  held: HeldKey,
  options: Pick<ResolvedIdempotencyOptions, 'leaseMs' | 'now'>,
): () => void {
  const timer = setInterval(
    () => {
      store.extend(held, new Date(options.now() + options.leaseMs)).catch(() => {});
    },
    Math.max(1, Math.floor(options.leaseMs / 3)),
  );
  if (typeof timer === 'object' && 'unref' in timer) timer.unref();
  return () => clearInterval(timer);
}
