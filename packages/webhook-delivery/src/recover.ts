import type { ISql as Sql } from 'postgres';
import { pgArray } from './pg-array';

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
  /** The clock (ms). @defaultValue `Date.now` */
  readonly now?: (() => number) | undefined;
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
export const RECOVER_MAX = 1000;

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
 * const recovered = await recoverDeliveries(sql, { account: 'acct_1', endpointId: 'we_...', since: Date.parse('2026-11-20T00:00:00Z') });
 * // answer 202 { recovered }
 * ```
 */
export async function recoverDeliveries(sql: Sql, input: RecoverInput): Promise<number | undefined> {
  const now = (input.now ?? Date.now)();
  const max = input.max ?? RECOVER_MAX;
  if (!Number.isInteger(max) || max < 1) throw new RangeError('max must be an integer of at least 1');
  const until = input.until ?? now;
  const [endpoint] = await sql`
    select id from holdfast_webhook_endpoints
    where id = ${input.endpointId} and account_id = ${input.account} and deleted_at is null`;
  if (!endpoint) return undefined;
  // Dead deliveries of an ordered endpoint join the back of their resource's line, in their old
  // order, their new places taken under the resources' sequence row locks (see replayDelivery).
  const rows = await sql`
    with found as (
      select id, ordering_key, ordering_pos, status = 'dead' and ordering_key is not null as rejoins
      from holdfast_deliveries
      where account_id = ${input.account} and endpoint_id = ${input.endpointId}
        and status in ('dead', 'failed')
        -- A delivery whose attempt is running (a retry, leased) is left to it: re-queuing it
        -- would send it twice at once. An expired lease's delivery is taken over by the workers.
        and lease_expires_at is null
        and (${input.eventTypes === undefined} or event_type = any(${pgArray(input.eventTypes ?? [])}::text[]))
        and created_at >= ${new Date(input.since)} and created_at < ${new Date(until)}
      order by created_at, id
      limit ${max}
      for update
    ),
    lines as (
      select r.resource_id from holdfast_resource_sequences r
      where r.resource_id in (select ordering_key from found where rejoins)
      order by r.resource_id
      for update of r
    ),
    places as (
      -- New places in each line's old order (the window's); the first of a line is due only
      -- when nothing of its line is unfinished, the others wait for the trigger (see outbox-writes).
      select f.id, nextval('holdfast_delivery_order') as pos,
             row_number() over (partition by f.ordering_key order by f.ordering_pos) = 1
               and not exists (
                 select 1 from holdfast_deliveries x
                 where x.endpoint_id = ${input.endpointId} and x.ordering_key = f.ordering_key
                   and x.status in ('pending', 'failed')
                 for key share) as due
      from found f
      -- The count (an init plan, run before any row) takes the locks before the first place.
      where f.rejoins and (select count(*) from lines) >= 0
    )
    update holdfast_deliveries d set
      status = 'pending', retry_base = d.attempt_count,
      next_attempt_at = case when places.due is false then null else ${new Date(now)}::timestamptz end,
      lease_owner = null, lease_expires_at = null, updated_at = ${new Date(now)},
      ordering_pos = coalesce(places.pos, d.ordering_pos)
    from found left join places on places.id = found.id
    where d.id = found.id
    returning d.id`;
  return rows.length;
}
