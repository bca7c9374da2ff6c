import { isLive } from '@holdfast/api-keys';
import type { Keyring } from '@holdfast/cursor-pagination';
import { paginate } from '@holdfast/cursor-pagination';
import { type Db, withStatementTimeout } from '@holdfast/db';
import { type IfMatch, ifMatchHolds, opaqueId } from '@holdfast/request-guards';
import { eventWrites } from '@holdfast/webhook-delivery';
import type postgres from 'postgres';
import { type Database, LIST_STATEMENT_TIMEOUT_MS } from '../../context';
import { isoTime } from '../../iso-time';
import { emit } from '../../outbox';
import { problem } from '../../problems';
import {
  type CreateOrder,
  type CreateRefund,
  type Order,
  orderSort,
  type Refund,
  refundSort,
  type UpdateOrder,
} from './schema';

// Orders and their refunds (CONTRACT section 5): the SQL and the state machine. Moves:
// pending -> shipped (PATCH status), pending -> cancelled (POST cancel, repeatable); anything
// else is 409 invalid_state_transition. Refunds take any order that is not cancelled (the
// contract sets no state for them), up to the amount not yet refunded. PATCH takes If-Match
// with the ETag of GET; a stale one is 409. Every change records its event in the same
// transaction (the outbox).

/** The API representation of a `holdfast_orders` row. */
export function toOrder(row: postgres.Row): Order {
  return {
    id: row.id,
    livemode: isLive(row.account_id),
    status: row.status,
    currency: row.currency,
    total: Number(row.total),
    amountRefunded: Number(row.amount_refunded),
    description: row.description,
    metadata: row.metadata,
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
  };
}

function toRefund(row: postgres.Row): Refund {
  return {
    id: row.id,
    livemode: isLive(row.account_id),
    order: row.order_id,
    amount: Number(row.amount),
    currency: row.currency,
    reason: row.reason,
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
  };
}

/** The ETag of a row's version. */
export const etag = (row: postgres.Row): string => `"${row.version}"`;
const notFound = () => problem('not_found', { detail: 'No such order.' });
const transition = (from: string, to: string) =>
  problem('invalid_state_transition', { detail: `An order cannot move from ${from} to ${to}.` });

// The order's CTE for a gate (one per gate: the statement's text is the same every time).
const insertOrders = new Map<string, string>();
function insertOrderWhere(claimed: string): string {
  let text = insertOrders.get(claimed);
  if (text === undefined) {
    text = `holdfast_order as (
  insert into holdfast_orders
    (id, account_id, status, currency, total, description, metadata, version, created_at, updated_at)
  select $1::text, $2::text, 'pending', $3::text, $4::bigint, $5::text, $6::text::jsonb, 1, $7::timestamptz, $7::timestamptz
  where ${claimed}
)`;
    insertOrders.set(claimed, text);
  }
  return text;
}
const SELECT_ORDER = 'select * from holdfast_orders where id = $1::text and account_id = $2::text';
const UPDATE_ORDER = `update holdfast_orders set
    status = $2::text, description = $3::text, metadata = $4::text::jsonb,
    version = version + 1, updated_at = $5::timestamptz
  where id = $1::text
  returning *`;
const DELETE_ORDER = 'delete from holdfast_orders where id = $1::text';
const CANCEL_ORDER = `update holdfast_orders set status = 'cancelled', version = version + 1, updated_at = $2::timestamptz
  where id = $1::text returning *`;
const INSERT_REFUND = `insert into holdfast_refunds (id, account_id, order_id, amount, currency, reason, created_at, updated_at)
  values ($1::text, $2::text, $3::text, $4::bigint, $5::text, $6::text, $7::timestamptz, $7::timestamptz)
  returning *`;
const ADD_REFUNDED = `update holdfast_orders
  set amount_refunded = amount_refunded + $2::bigint, version = version + 1, updated_at = $3::timestamptz
  where id = $1::text returning *`;

async function lockOrder(tx: Db, account: string, id: string): Promise<postgres.Row> {
  const [row] = await tx.query<postgres.Row>(`${SELECT_ORDER} for update`, [id, account]);
  if (!row) throw notFound();
  return row;
}

const utf8 = new TextEncoder();

/**
 * `metadata` with its keys in the order `jsonb` keeps them (shorter keys first, then by their
 * UTF-8 bytes), so the answer built before the insert is the one GET reads back.
 */
function asJsonb(metadata: Readonly<Record<string, string>>): Record<string, string> {
  const keys = Object.keys(metadata).map((key) => ({ key, bytes: utf8.encode(key) }));
  keys.sort((a, b) => a.bytes.length - b.bytes.length || Buffer.compare(a.bytes, b.bytes));
  return Object.fromEntries(keys.map(({ key }) => [key, metadata[key] ?? '']));
}

/** A new order, built before it is written: its answer, ETag, and its writes. */
export interface NewOrder {
  readonly order: Order;
  readonly etag: string;
  /**
   * The order insert and its `order.created` event as CTEs of one statement, each gated on
   * `claimed` (for `@holdfast/idempotency`'s `idempotentStatement`).
   */
  writes(claimed: string): { readonly text: string; readonly values: readonly unknown[] };
}

/**
 * A new pending order: the row (id, timestamps, version 1, nothing refunded) is built here, so
 * the answer is known before anything is written, and its insert and `order.created` event are
 * CTEs of the one statement that also claims the key and stores the answer.
 */
export function newOrder(account: string, body: CreateOrder, now: number): NewOrder {
  const at = isoTime(new Date(now));
  const metadata = asJsonb(body.metadata ?? {});
  const order: Order = {
    id: opaqueId('ord'),
    livemode: isLive(account),
    status: 'pending',
    currency: body.currency,
    total: body.total,
    amountRefunded: 0,
    description: body.description ?? null,
    metadata,
    createdAt: at,
    updatedAt: at,
  };
  return {
    order,
    etag: '"1"',
    writes(claimed) {
      const own = [
        order.id,
        account,
        order.currency,
        order.total,
        order.description,
        JSON.stringify(metadata),
        at,
      ];
      const event = eventWrites(
        { account, type: 'order.created', resourceId: order.id, object: order },
        { offset: own.length, when: claimed, now: () => now },
      );
      return { text: `${insertOrderWhere(claimed)},\n${event.ctes}`, values: [...own, ...event.values] };
    },
  };
}

/** The list query of GET /v1/orders and GET /v1/orders/{id}/refunds, as validated. */
export interface ListQuery {
  readonly sort?: string | undefined;
  readonly cursor?: string | undefined;
  readonly limit?: string | undefined;
  readonly include?: string | undefined;
}

/** A page of the account's orders (signed cursors, sort allowlist, `status` filter). */
export function listOrders(
  database: Database,
  keyring: Keyring,
  account: string,
  query: ListQuery & { readonly status?: string | undefined },
) {
  return withStatementTimeout(database.transaction, LIST_STATEMENT_TIMEOUT_MS, (tx) =>
    paginate(tx, {
      from: 'holdfast_orders',
      where: { text: 'account_id = $1', values: [account] },
      allowlist: orderSort,
      sort: query.sort,
      cursor: query.cursor,
      limit: query.limit,
      include: query.include,
      filterColumns: { status: 'status' },
      filter: { status: query.status },
      binding: { account, resource: 'orders' },
      keyring,
      map: toOrder,
    }),
  );
}

/** The order's row; 404 `not_found` when absent or another account's. */
export async function getOrder(database: Database, account: string, id: string): Promise<postgres.Row> {
  const [row] = await database.db.query<postgres.Row>(SELECT_ORDER, [id, account]);
  if (!row) throw notFound();
  return row;
}

/**
 * Applies a PATCH: If-Match (409 `version_conflict`), the one move it makes (pending ->
 * shipped, else 409 `invalid_state_transition`), description and metadata. An unchanged
 * order is returned as it is, without a new version or event.
 */
export function updateOrder(
  database: Database,
  account: string,
  id: string,
  body: UpdateOrder,
  ifMatch: IfMatch | undefined,
  now: number,
): Promise<postgres.Row> {
  return database.transaction(async (_tx, tx) => {
    const current = await lockOrder(tx, account, id);
    if (ifMatch !== undefined && !ifMatchHolds(ifMatch, etag(current))) {
      throw problem('version_conflict', {
        detail: `The order is at version ${etag(current)}, which If-Match does not name. Fetch it again and retry.`,
      });
    }
    let status: string = current.status;
    if (body.status !== undefined && body.status !== current.status) {
      if (current.status !== 'pending' || body.status !== 'shipped')
        throw transition(current.status, body.status);
      status = body.status;
    }
    const changed =
      status !== current.status ||
      (body.description !== undefined && body.description !== current.description) ||
      (body.metadata !== undefined && JSON.stringify(body.metadata) !== JSON.stringify(current.metadata));
    if (!changed) return current;
    const at = new Date(now);
    const [updated] = await tx.query<postgres.Row>(UPDATE_ORDER, [
      id,
      status,
      body.description === undefined ? current.description : body.description,
      JSON.stringify(body.metadata ?? current.metadata),
      at,
    ]);
    if (!updated) throw notFound();
    await emit(tx, { account, type: 'order.updated', resourceId: id, object: toOrder(updated), now });
    return updated;
  });
}

/** Deletes a pending order without refunds (else 409 `invalid_state_transition`). */
export function deleteOrder(database: Database, account: string, id: string, now: number): Promise<void> {
  return database.transaction(async (_tx, tx) => {
    const current = await lockOrder(tx, account, id);
    if (current.status !== 'pending') {
      throw problem('invalid_state_transition', {
        detail: `Only pending orders can be deleted; this one is ${current.status}.`,
      });
    }
    if (Number(current.amount_refunded) > 0) {
      // Deleting would take the refund records with it: money history is never deleted.
      throw problem('invalid_state_transition', {
        detail: 'An order with refunds cannot be deleted; cancel it instead.',
      });
    }
    await tx.query(DELETE_ORDER, [id]);
    await emit(tx, {
      account,
      type: 'order.deleted',
      resourceId: id,
      object: { ...toOrder(current), updatedAt: new Date(now).toISOString() },
      now,
    });
  });
}

/** pending -> cancelled; a cancelled order is returned unchanged, a shipped one is 409. */
export function cancelOrder(
  database: Database,
  account: string,
  id: string,
  now: number,
): Promise<postgres.Row> {
  return database.transaction(async (_tx, tx) => {
    const current = await lockOrder(tx, account, id);
    if (current.status === 'cancelled') return current;
    if (current.status !== 'pending') throw transition(current.status, 'cancelled');
    const [updated] = await tx.query<postgres.Row>(CANCEL_ORDER, [id, new Date(now)]);
    if (!updated) throw notFound();
    await emit(tx, { account, type: 'order.cancelled', resourceId: id, object: toOrder(updated), now });
    return updated;
  });
}

/** A page of the order's refunds; 404 when the order is absent or another account's. */
export async function listRefunds(
  database: Database,
  keyring: Keyring,
  account: string,
  id: string,
  query: ListQuery,
) {
  const [order] = await database.db.query(SELECT_ORDER, [id, account]);
  if (!order) throw notFound();
  return withStatementTimeout(database.transaction, LIST_STATEMENT_TIMEOUT_MS, (tx) =>
    paginate(tx, {
      from: 'holdfast_refunds',
      where: { text: 'account_id = $1 and order_id = $2', values: [account, id] },
      allowlist: refundSort,
      sort: query.sort,
      cursor: query.cursor,
      limit: query.limit,
      include: query.include,
      binding: { account, resource: `orders/${id}/refunds` },
      keyring,
      map: toRefund,
    }),
  );
}

/**
 * Refunds part of an order inside `tx` (the idempotency transaction): 409 for a cancelled
 * order, 422 `refund_exceeds_amount` beyond what is left; emits `order.refunded`.
 */
export async function createRefund(
  tx: Db,
  account: string,
  id: string,
  body: CreateRefund,
  now: number,
): Promise<Refund> {
  const order = await lockOrder(tx, account, id);
  if (order.status === 'cancelled') {
    throw problem('invalid_state_transition', { detail: 'A cancelled order cannot be refunded.' });
  }
  const left = Number(order.total) - Number(order.amount_refunded);
  if (body.amount > left) {
    throw problem('refund_exceeds_amount', {
      detail: `At most ${left} ${order.currency} minor units are left to refund.`,
      errors: [
        {
          field: 'amount',
          code: 'refund_exceeds_amount',
          pointer: '#/amount',
          detail: `At most ${left} can be refunded.`,
        },
      ],
    });
  }
  const at = new Date(now);
  const [refund] = await tx.query<postgres.Row>(INSERT_REFUND, [
    opaqueId('re'),
    account,
    id,
    body.amount,
    order.currency,
    body.reason ?? null,
    at,
  ]);
  const [updated] = await tx.query<postgres.Row>(ADD_REFUNDED, [id, body.amount, at]);
  if (!refund || !updated) throw new Error('refund insert returned no row');
  const result = toRefund(refund);
  await emit(tx, {
    account,
    type: 'order.refunded',
    resourceId: id,
    object: { ...toOrder(updated), refund: result },
    now,
  });
  return result;
}
