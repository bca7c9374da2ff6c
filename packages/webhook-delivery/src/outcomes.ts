import { opaqueId } from '@holdfast/ids';
import type { Outcome } from './classify';
import type { LeasedRow } from './lease';
import { pgArray } from './pg-array';
import type { QueueDb } from './sql/worker';

/** What one attempt came to, waiting to be written with the rest of its batch. */
export interface AttemptResult {
  row: LeasedRow;
  status: number | undefined;
  error: string | null;
  prefix: string | null;
  outcome: Outcome;
  nextStatus: 'succeeded' | 'failed' | 'dead';
  nextAttemptAt: Date | null;
  started: number;
  finished: number;
  /** A sign of overload: the endpoint's limit is halved. */
  congested: boolean;
  /** A fast success: the endpoint's limit grows by 1 / limit. */
  fast: boolean;
  /** Until when the endpoint asked (`Retry-After`) not to be sent anything. */
  pauseUntil: Date | null;
}

/** Deadlock between two workers' outcome statements (rows locked in their own orders). */
const DEADLOCK = '40P01';

/**
 * Writes a batch of outcomes in one statement: every attempt row,
 * every delivery's new state and lease release, the success side of endpoint health, the places
 * released counted in this worker's release stripe, and the pacing row only on a sign of
 * overload (the adaptive limit halved) or a `Retry-After` pause. Only leases this worker still
 * owns are released: one taken over after an expiry belongs to its new owner, whose own outcome
 * releases it. The statement is the function `holdfast_write_outcomes`, defined in
 * `migrations/005_functions.sql` and last replaced by `migrations/010_pacing.sql`.
 * Then, for endpoints under their ceiling, the additive increase (+1 per `limit` fast
 * successes) in a statement of its own that commits without waiting for the flush, so the
 * pacing rows lease rounds need are never held through the outcomes' durable commit. It waits
 * for no lock: an endpoint whose row is locked is passed over and its count kept in `carry`.
 */
export async function writeOutcomes(
  queue: QueueDb,
  {
    owner,
    stripe,
    perEndpoint,
    batch,
    carry,
  }: {
    owner: string;
    stripe: number;
    perEndpoint: number;
    batch: readonly AttemptResult[];
    /** Fast successes whose increase found the pacing row locked, per endpoint: added to this batch's, then replaced by what this batch passes over. */
    carry?: Map<string, number>;
  },
): Promise<void> {
  const column = (pick: (r: AttemptResult) => string | number | boolean | null) => pgArray(batch.map(pick));
  const values = [
    owner,
    stripe,
    perEndpoint,
    column((r) => r.row.id),
    column(() => opaqueId('att')),
    column((r) => r.row.account_id),
    column((r) => r.row.endpoint_id),
    column((r) => r.status ?? null),
    column((r) => r.error),
    column((r) => Math.max(0, Math.round(r.finished - r.started))),
    column((r) => r.prefix),
    column((r) => new Date(r.finished).toISOString()),
    column((r) => r.nextStatus),
    column((r) => r.nextAttemptAt?.toISOString() ?? null),
    column((r) => r.congested),
    column((r) => r.fast),
    column((r) => r.pauseUntil?.toISOString() ?? null),
  ];
  for (let tries = 1; ; tries += 1) {
    try {
      await queue.db.query(queue.sql.writeOutcomes, values);
      break;
    } catch (error) {
      // Two workers' batches can lock the same rows in different orders; PostgreSQL
      // breaks the cycle by failing one, which simply writes again.
      const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
      if (code !== DEADLOCK || tries >= 5) throw error;
    }
  }
  const fast = fastByEndpoint(batch, carry);
  if (fast.size === 0) {
    // Whatever was carried belonged to endpoints this batch found overloaded: dropped.
    carry?.clear();
    return;
  }
  const passed = await queue.db.query<{ endpoint_id: string }>(queue.sql.paceOutcomes, [
    perEndpoint,
    pgArray([...fast.keys()]),
    pgArray([...fast.values()]),
  ]);
  carry?.clear();
  for (const { endpoint_id } of passed) carry?.set(endpoint_id, fast.get(endpoint_id) ?? 0);
}

/**
 * Each endpoint's fast successes in a batch, with those carried from earlier batches; none for
 * an endpoint the batch found overloaded (its limit halves, and what it carried is dropped).
 */
function fastByEndpoint(batch: readonly AttemptResult[], carry: ReadonlyMap<string, number> | undefined) {
  const congested = new Set(batch.filter((r) => r.congested).map((r) => r.row.endpoint_id));
  const fast = new Map<string, number>();
  for (const [endpointId, n] of carry ?? []) if (!congested.has(endpointId)) fast.set(endpointId, n);
  for (const r of batch)
    if (r.fast && !congested.has(r.row.endpoint_id))
      fast.set(r.row.endpoint_id, (fast.get(r.row.endpoint_id) ?? 0) + 1);
  return fast;
}
