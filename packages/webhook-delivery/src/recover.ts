import type { Db } from '@holdfast/db';
import type { DeliveryOptions } from './options';
import { pgArray } from './pg-array';
import { storeStatements } from './sql/store';

/** What {@link recoverDeliveries} re-queues: one endpoint's deliveries created in `[since, until)`. */
export interface RecoverInput {
  /** The tenant the endpoint belongs to. */
  readonly account: string;
  /** The endpoint's id. */
  readonly endpointId: string;
  /** Deliveries created at or after this instant (ms since the epoch)... */
  readonly since: number;
  /** ...and before this one (default: now). */
  readonly until?: number | undefined;
  /**
   * Only deliveries of these event types (absent: every type): a caller re-queues only the
   * data it may read, so deliveries of types the endpoint no longer carries stay where they are.
   */
  readonly eventTypes?: readonly string[] | undefined;
  /**
   * Re-queue at most this many, the oldest first: one call never sends a destination an
   * unbounded burst (call again for the rest). @defaultValue 1000
   */
  readonly max?: number | undefined;
}

/** The most deliveries one {@link recoverDeliveries} call re-queues unless told otherwise. */
const RECOVER_MAX = 1000;

/**
 * Bulk recovery: every `dead` or `failed` delivery of one endpoint created in the range goes
 * back to `pending`, due now, with a fresh retry schedule (as a replay does, one by one), and
 * keeps its Webhook-Id, so receivers deduplicate what they already had. At most `max` (1,000 by
 * default), the oldest first. A delivery whose attempt is running (leased) is skipped, not
 * counted: it is never sent twice at once. Resolves with how many
 * were re-queued, or `undefined` when the account has no such endpoint. An endpoint that is
 * disabled keeps them until it is enabled again: the worker sends nothing to a disabled one.
 *
 * @example
 * ```ts
 * const recovered = await recoverDeliveries(db, { account: 'acct_1', endpointId: 'we_...', since: Date.parse('2026-11-20T00:00:00Z') });
 * // answer 202 { recovered }
 * ```
 */
export async function recoverDeliveries(
  db: Db,
  input: RecoverInput,
  options: DeliveryOptions = {},
): Promise<number | undefined> {
  const now = (options.now ?? Date.now)();
  const max = input.max ?? RECOVER_MAX;
  if (!Number.isInteger(max) || max < 1) throw new RangeError('max must be an integer of at least 1');
  const statements = storeStatements(options.schema);
  const [endpoint] = await db.query(statements.endpointExists, [input.endpointId, input.account]);
  if (!endpoint) return undefined;
  const rows = await db.query(statements.recover, [
    input.account,
    input.endpointId,
    input.eventTypes === undefined ? null : pgArray(input.eventTypes),
    new Date(input.since).toISOString(),
    new Date(input.until ?? now).toISOString(),
    max,
    new Date(now).toISOString(),
  ]);
  return rows.length;
}
