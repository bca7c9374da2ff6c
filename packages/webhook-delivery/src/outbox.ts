import type { Db } from '@holdfast/db';
import { fromPostgres } from '@holdfast/db/postgres';
import type { ISql as Sql } from 'postgres';
import type { AccountRef } from './endpoints';
import { opaqueId } from './id';
import { releaseStripe } from './lease';
import { ENQUEUE_EVENT, enqueueEventValues } from './outbox-writes';
import { deliveryProblems } from './problems';
import {
  type Delivery,
  type DeliveryAttempt,
  toAttempt,
  toDelivery,
  toEvent,
  type WebhookEvent,
} from './rows';

export interface EventInput {
  account: string;
  /** `subscription.created`, `order.refunded`, ... */
  type: string;
  /**
   * The resource's id (`data.object.id`): `sequence` rises monotonically per resource, and it is
   * the event's ordering key (an endpoint with `ordering: 'per-resource'` gets the deliveries of
   * one resource one at a time, in this order).
   */
  resourceId: string;
  /** The resource after the change; it should carry `updatedAt`. */
  object: Record<string, unknown>;
  /** The clock (ms). @defaultValue `Date.now` */
  now?: () => number;
}

/**
 * The transactional outbox: records the event and one delivery for each of the account's
 * active endpoints subscribed to its type whose filter (if any) it matches, inside the caller's business transaction, so an
 * event exists exactly when the change it describes committed. One statement (one round trip):
 * the resource's sequence, the event row and the fan-out are data-modifying CTEs of one query,
 * and the fan-out wakes the delivery workers at commit.
 *
 * `tx` is the caller's transaction on any driver, as a {@link Db} (`fromPg(client)`,
 * `fromDrizzle(tx, sql)`, `fromKysely(trx)`, `fromPrisma(tx)`), or a postgres.js transaction
 * as it is.
 *
 * @example
 * ```ts
 * await sql.begin(async (tx) => {
 *   const [sub] = await tx`insert into subscriptions ... returning *`;
 *   await enqueueEvent(tx, { account, type: 'subscription.created', resourceId: sub.id, object: toSubscription(sub) });
 * });
 * ```
 */
export async function enqueueEvent(tx: Db | Sql, input: EventInput): Promise<WebhookEvent> {
  const db = 'query' in tx && typeof tx !== 'function' ? tx : fromPostgres(tx);
  const { values, id, createdAt } = enqueueEventValues(input);
  const [row] = await db.query<{ sequence: string }>(ENQUEUE_EVENT, values);
  return {
    id,
    type: input.type,
    createdAt,
    sequence: Number(row?.sequence ?? 1),
    data: { object: input.object },
  };
}

/**
 * The event, or `undefined` when absent or another account's.
 *
 * @example
 * ```ts
 * const event = await getEvent(sql, { account: 'acct_1', id: 'evt_...' });
 * ```
 */
export async function getEvent(sql: Sql, { account, id }: AccountRef): Promise<WebhookEvent | undefined> {
  const [row] = await sql`select payload from holdfast_events where id = ${id} and account_id = ${account}`;
  return row ? toEvent(row) : undefined;
}

/**
 * The delivery, or `undefined` when absent or another account's.
 *
 * @example
 * ```ts
 * const delivery = await getDelivery(sql, { account: 'acct_1', id: 'dlv_...' });
 * ```
 */
export async function getDelivery(sql: Sql, { account, id }: AccountRef): Promise<Delivery | undefined> {
  const [row] = await sql`select * from holdfast_deliveries where id = ${id} and account_id = ${account}`;
  return row ? toDelivery(row) : undefined;
}

/**
 * Every attempt of a delivery, oldest first (a delivery has at most one attempt per schedule
 * step and replay, so the list is short); `undefined` when the delivery is absent or another
 * account's. For a paginated list, query `holdfast_delivery_attempts` and map rows with `toAttempt`.
 *
 * @example
 * ```ts
 * const attempts = await listAttempts(sql, { account: 'acct_1', deliveryId: 'dlv_...' });
 * ```
 */
export async function listAttempts(
  sql: Sql,
  { account, deliveryId }: { account: string; deliveryId: string },
): Promise<DeliveryAttempt[] | undefined> {
  const [delivery] = await sql`
    select id from holdfast_deliveries where id = ${deliveryId} and account_id = ${account}`;
  if (!delivery) return undefined;
  const rows = await sql`
    select * from holdfast_delivery_attempts
    where delivery_id = ${deliveryId} and account_id = ${account}
    order by created_at, id`;
  return rows.map(toAttempt);
}

/** The longest an attempt may run (the worker's timeout is 5 to 10 s): the wait a refused replay suggests at most. */
const IN_FLIGHT_RETRY_S = 10;

/**
 * Replays a delivery (dead-letter replay): the same delivery and Webhook-Id,
 * back to `pending`, due now, with a fresh retry schedule; earlier attempts stay in the log.
 * A delivery whose attempt is running (its lease is live) is left alone: replaying it throws
 * the 409 problem `delivery_in_flight` with `retryAfter` (seconds until the attempt has ended
 * at the latest, at most 10), so nothing is sent twice at once and its attempt count, the
 * in-flight count and the attempt log keep agreeing. A lease that expired (its worker died
 * before writing an outcome) is dropped with its place in the endpoint's in-flight count. A
 * finished delivery of an ordered endpoint joins the back of its resource's line: it is sent
 * after the deliveries of that resource queued before the replay, out of its events' order
 * (its `sequence` tells the receiver it is older).
 *
 * @example
 * ```ts
 * const delivery = await replayDelivery(sql, { account: 'acct_1', id: 'dlv_...' }); // answer 202 with it
 * // throws deliveryProblems.create('delivery_in_flight', { retryAfter }) while an attempt runs
 * ```
 */
export async function replayDelivery(
  sql: Sql,
  { account, id }: AccountRef,
  { now: clock = Date.now }: { now?: () => number } = {},
): Promise<Delivery | undefined> {
  const now = clock();
  const at = new Date(now);
  // `old` locks the row first: a lease statement leasing it meanwhile is waited for, and the
  // lease it wrote is what `in_flight` reads.
  const [row] = await sql`
    with old as (
      select id, endpoint_id, lease_expires_at is not null as leased,
             coalesce(lease_expires_at > ${at}::timestamptz, false) as in_flight, lease_expires_at,
             ordering_key, status in ('succeeded', 'dead') as finished
      from holdfast_deliveries
      where id = ${id} and account_id = ${account}
      for update
    ),
    line as (
      -- The new place is taken under the resource's sequence row lock, as a new event's is: no
      -- place handed out before it can commit after it and overtake it while it is in flight.
      select r.resource_id from holdfast_resource_sequences r, old
      where r.resource_id = old.ordering_key and old.finished and not old.in_flight
      for update of r
    ),
    released as (
      insert into holdfast_endpoint_releases (endpoint_id, stripe, released)
      select endpoint_id, ${releaseStripe(Math.random)}, 1 from old where old.leased and not old.in_flight
      on conflict (endpoint_id, stripe) do update set released = holdfast_endpoint_releases.released + 1
    ),
    replayed as (
      update holdfast_deliveries d set
        status = 'pending', retry_base = d.attempt_count,
        -- Rejoining behind an unfinished delivery of its line, it waits for the trigger (as a new
        -- delivery does, see outbox-writes).
        next_attempt_at = case when old.finished and old.ordering_key is not null and exists (
            select 1 from holdfast_deliveries x
            where x.endpoint_id = old.endpoint_id and x.ordering_key = old.ordering_key
              and x.status in ('pending', 'failed')
            for key share) then null else ${at}::timestamptz end,
        lease_owner = null, lease_expires_at = null, updated_at = ${at},
        ordering_pos = case when old.finished and old.ordering_key is not null then coalesce(
          (select nextval('holdfast_delivery_order') from line), nextval('holdfast_delivery_order'))
          else d.ordering_pos end
      from old where d.id = old.id and not old.in_flight
      returning d.*
    )
    select old.in_flight as replay_in_flight, old.lease_expires_at as replay_lease_expires_at, replayed.*
    from old left join replayed on true`;
  if (!row) return undefined;
  if (row.replay_in_flight === true) {
    const raw: unknown = row.replay_lease_expires_at;
    const until = raw instanceof Date ? raw.getTime() : Date.parse(String(raw));
    const seconds = Math.ceil((until - now) / 1000);
    throw deliveryProblems.create('delivery_in_flight', {
      detail: `An attempt of delivery ${id} is running; replay it once that attempt has ended.`,
      retryAfter: Number.isFinite(seconds)
        ? Math.max(1, Math.min(IN_FLIGHT_RETRY_S, seconds))
        : IN_FLIGHT_RETRY_S,
    });
  }
  return toDelivery(row);
}

/** What {@link sendTestEvent} sends. */
export interface TestEventInput {
  account: string;
  /** The endpoint that receives it, and no other. */
  endpointId: string;
  /** The event type, one the endpoint carries (the caller checks). */
  type: string;
  /** The resource the event is about: usually the documented example of `type`. */
  object: Record<string, unknown>;
  /** The clock (ms). @defaultValue `Date.now` */
  now?: () => number;
}

/**
 * Enqueues a test event: one event of `type` with `"test": true` at the top level of its
 * payload, and one delivery to `endpointId` only (no fan-out, and the endpoint's filter is not
 * applied: the caller chose the endpoint). It is signed, retried and logged like any other.
 * `sequence` is 0 and no resource's sequence moves, so a receiver's ordering of real events is
 * untouched. One statement; `undefined` when the account has no such endpoint.
 *
 * @example
 * ```ts
 * const sent = await sendTestEvent(sql, { account: 'acct_1', endpointId: 'we_...', type: 'order.created', object: exampleOrder });
 * // sent?.delivery.id: answer 202 with it
 * ```
 */
export async function sendTestEvent(
  sql: Sql,
  input: TestEventInput,
): Promise<{ event: WebhookEvent; delivery: Delivery } | undefined> {
  const now = new Date((input.now ?? Date.now)());
  const event: WebhookEvent = {
    id: opaqueId('evt'),
    type: input.type,
    createdAt: now.toISOString(),
    sequence: 0,
    test: true,
    data: { object: input.object },
  };
  const resourceId = typeof input.object.id === 'string' ? input.object.id : event.id;
  const [row] = await sql`
    with ep as (
      select id from holdfast_webhook_endpoints
      where id = ${input.endpointId} and account_id = ${input.account} and deleted_at is null
    ),
    ev as (
      insert into holdfast_events (id, account_id, type, resource_id, sequence, payload, created_at)
      select ${event.id}, ${input.account}, ${input.type}, ${resourceId}, 0, ${JSON.stringify(event)}, ${now}
      from ep
      returning id
    ),
    d as (
      insert into holdfast_deliveries
        (id, account_id, event_id, endpoint_id, event_type, status, next_attempt_at, created_at, updated_at)
      select ${opaqueId('dlv')}, ${input.account}, ev.id, ep.id, ${input.type}, 'pending', ${now}, ${now}, ${now}
      from ev, ep
      returning *
    )
    select d.*, pg_notify(left('holdfast_due.' || current_schema(), 63), '') as woken from d`;
  return row ? { event, delivery: toDelivery(row) } : undefined;
}
