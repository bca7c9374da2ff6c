import type { Db } from '@holdfast/db';
import { opaqueId } from '@holdfast/ids';
import type { AccountRef } from './endpoints';
import { releaseStripe } from './lease';
import type { DeliveryOptions } from './options';
import { type EventInput, fanOutValues } from './outbox-writes';
import { deliveryProblems } from './problems';
import {
  type Delivery,
  type DeliveryAttempt,
  type Row,
  rowOf,
  toAttempt,
  toDelivery,
  toEvent,
  type WebhookEvent,
} from './rows';
import { storeStatements } from './sql/store';

const clock = (options: DeliveryOptions): number => (options.now ?? Date.now)();

/**
 * The transactional outbox: records the event and one delivery for each of the account's
 * active endpoints subscribed to its type whose filter (if any) it matches, inside the caller's
 * business transaction, so an event exists exactly when the change it describes committed. One
 * statement (one round trip): the resource's sequence, the event row and the fan-out are
 * data-modifying CTEs of one query, and the fan-out wakes the delivery workers at commit.
 *
 * `tx` is the caller's transaction as a {@link Db}, on any driver (`pgTransaction(pool)`'s `db`,
 * `fromPg(client)`, `fromPostgres(tx)`, `fromDrizzle(tx, sql)`, `fromKysely(trx)`,
 * `fromPrisma(tx)`). Given a pool instead, the event commits on its own.
 *
 * @example
 * ```ts
 * await pgTransaction(pool)(async (client, tx) => {
 *   const { rows: [sub] } = await client.query('insert into subscriptions ... returning *');
 *   await enqueueEvent(tx, { account, type: 'subscription.created', resourceId: sub.id, object: toSubscription(sub) });
 * });
 * ```
 */
export async function enqueueEvent(
  tx: Db,
  input: EventInput,
  options: DeliveryOptions = {},
): Promise<WebhookEvent> {
  const { values, id, createdAt } = fanOutValues(input, clock(options));
  const [row] = await tx.query<{ sequence: string }>(storeStatements(options.schema).enqueue, values);
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
 * const event = await getEvent(db, { account: 'acct_1', id: 'evt_...' });
 * ```
 */
export async function getEvent(
  db: Db,
  { account, id }: AccountRef,
  options: DeliveryOptions = {},
): Promise<WebhookEvent | undefined> {
  return rowOf(db, storeStatements(options.schema).getEvent, { account, id }, toEvent);
}

/**
 * The delivery, or `undefined` when absent or another account's.
 *
 * @example
 * ```ts
 * const delivery = await getDelivery(db, { account: 'acct_1', id: 'dlv_...' });
 * ```
 */
export async function getDelivery(
  db: Db,
  { account, id }: AccountRef,
  options: DeliveryOptions = {},
): Promise<Delivery | undefined> {
  return rowOf(db, storeStatements(options.schema).getDelivery, { account, id }, toDelivery);
}

/**
 * Every attempt of a delivery, oldest first (a delivery has at most one attempt per schedule
 * step and replay, so the list is short); `undefined` when the delivery is absent or another
 * account's. One statement.
 *
 * @example
 * ```ts
 * const attempts = await listAttempts(db, { account: 'acct_1', id: 'dlv_...' });
 * ```
 */
export async function listAttempts(
  db: Db,
  { account, id }: AccountRef,
  options: DeliveryOptions = {},
): Promise<DeliveryAttempt[] | undefined> {
  const rows = await db.query<Row>(storeStatements(options.schema).listAttempts, [id, account]);
  if (rows.length === 0) return undefined;
  return rows.filter((row) => row.id !== null && row.id !== undefined).map(toAttempt);
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
 * const delivery = await replayDelivery(db, { account: 'acct_1', id: 'dlv_...' }); // answer 202 with it
 * // throws deliveryProblems.create('delivery_in_flight', { retryAfter }) while an attempt runs
 * ```
 */
export async function replayDelivery(
  db: Db,
  { account, id }: AccountRef,
  options: DeliveryOptions = {},
): Promise<Delivery | undefined> {
  const now = clock(options);
  const [row] = await db.query<Row>(storeStatements(options.schema).replayDelivery, [
    id,
    account,
    new Date(now).toISOString(),
    releaseStripe(Math.random),
  ]);
  if (!row) return undefined;
  if (row.replay_in_flight === true) {
    const seconds = Math.ceil((Number(row.replay_lease_expires_ms) - now) / 1000);
    throw deliveryProblems.create('delivery_in_flight', {
      detail: `An attempt of delivery ${id} is running; replay it once that attempt has ended.`,
      retryAfter: Number.isFinite(seconds)
        ? Math.max(1, Math.min(IN_FLIGHT_RETRY_S, seconds))
        : IN_FLIGHT_RETRY_S,
    });
  }
  return toDelivery(row);
}

/** What {@link sendTestEvent} sends: an event of `type` about `object`, to `endpointId` only. */
export interface TestEventInput extends Omit<EventInput, 'resourceId'> {
  /** The endpoint that receives it, and no other. */
  endpointId: string;
}

/**
 * Enqueues a test event: one event of `type` (one the endpoint carries: the caller checks; the
 * resource is usually the documented example of `type`) with `"test": true` at the top level of its
 * payload, and one delivery to `endpointId` only (no fan-out, and the endpoint's filter is not
 * applied: the caller chose the endpoint). It is signed, retried and logged like any other.
 * `sequence` is 0 and no resource's sequence moves, so a receiver's ordering of real events is
 * untouched. One statement; `undefined` when the account has no such endpoint.
 *
 * @example
 * ```ts
 * const sent = await sendTestEvent(db, { account: 'acct_1', endpointId: 'we_...', type: 'order.created', object: exampleOrder });
 * // sent?.delivery.id: answer 202 with it
 * ```
 */
export async function sendTestEvent(
  db: Db,
  input: TestEventInput,
  options: DeliveryOptions = {},
): Promise<{ event: WebhookEvent; delivery: Delivery } | undefined> {
  const at = new Date(clock(options));
  const now = at.toISOString();
  const event: WebhookEvent = {
    id: opaqueId('evt'),
    type: input.type,
    createdAt: now,
    sequence: 0,
    test: true,
    data: { object: input.object },
  };
  const resourceId = typeof input.object.id === 'string' ? input.object.id : event.id;
  const [row] = await db.query<Row>(storeStatements(options.schema).testEvent, [
    input.endpointId,
    input.account,
    event.id,
    input.type,
    resourceId,
    JSON.stringify(event),
    now,
    timedDeliveryId(at.getTime()),
  ]);
  return row ? { event, delivery: toDelivery(row) } : undefined;
}

/**
 * A delivery id that carries its creation time, as the fan-out makes them (`dlv_` and a UUIDv7
 * in hex: 48 bits of Unix milliseconds, version 7, the variant, random bits), so a read by id
 * finds the delivery's time partition.
 */
function timedDeliveryId(ms: number): string {
  const random = crypto.getRandomValues(new Uint8Array(10));
  random[2] = ((random[2] as number) & 0x3f) | 0x80;
  const hex = [...random].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  return `dlv_${ms.toString(16).padStart(12, '0')}7${hex.slice(1)}`;
}
