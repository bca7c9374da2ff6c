import { isLive } from '@holdfast/api-keys';
import type { Db } from '@holdfast/db';
import { opaqueId } from '@holdfast/request-guards';
import type { z } from '@hono/zod-openapi';
import type postgres from 'postgres';
import type { Database } from '../../context';
import { isoTime } from '../../iso-time';
import { emit } from '../../outbox';
import { problem } from '../../problems';
import { findPaymentMethod } from '../payment-methods/repository';
import {
  ASYNC_THRESHOLD,
  type CreatePaymentSchema,
  DECLINED_LAST4,
  type PAYMENT_STATUSES,
  type PaymentSchema,
} from './schema';

// The payments' SQL and the simulated processor's state machine: processing settles to
// succeeded or failed, each emitting its event in the same transaction.

/** The event a settled payment emits; a payment still processing has none to emit. */
function settledEvent(status: (typeof PAYMENT_STATUSES)[number]): 'payment.succeeded' | 'payment.failed' {
  if (status === 'processing') throw new Error('a processing payment has not settled');
  return `payment.${status}`;
}

/** The API representation of a `holdfast_payments` row. */
export function toPayment(row: postgres.Row): z.infer<typeof PaymentSchema> {
  return {
    id: row.id,
    livemode: isLive(row.account_id),
    status: row.status,
    amount: Number(row.amount),
    currency: row.currency,
    paymentMethod: row.payment_method_id,
    order: row.order_id,
    description: row.description,
    failureReason: row.failure_reason,
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
  };
}

const unprocessable = (field: string, detail: string) =>
  problem('unprocessable', {
    detail,
    errors: [{ field, code: 'unprocessable', pointer: `#/${field}`, detail }],
  });

/** What a new payment needs besides its body: the clock, and how long a large one takes to settle. */
export interface NewPaymentOptions {
  readonly now: number;
  readonly settleDelayMs: number;
}

const LOCK_ORDER = `select currency, status, total from holdfast_orders
  where id = $1::text and account_id = $2::text
  for update`;
const ORDER_PAID = `select coalesce(sum(amount), 0)::bigint as amount from holdfast_payments
  where account_id = $1::text and order_id = $2::text and status in ('succeeded', 'processing')`;
const INSERT_PAYMENT = `insert into holdfast_payments (id, account_id, status, amount, currency, payment_method_id,
    order_id, description, failure_reason, outcome, settle_at, created_at, updated_at)
  values ($1::text, $2::text, $3::text, $4::bigint, $5::text, $6::text, $7::text, $8::text, $9::text, $10::text,
    $11::timestamptz, $12::timestamptz, $12::timestamptz)
  returning *`;
const SELECT_PAYMENT = 'select * from holdfast_payments where id = $1::text and account_id = $2::text';
const DUE_PAYMENTS = `select id from holdfast_payments
  where status = 'processing' and settle_at <= $1::timestamptz
  order by settle_at limit 50 for update skip locked`;
const SETTLE_PAYMENT = `update holdfast_payments set status = outcome, settle_at = null, updated_at = $2::timestamptz,
    failure_reason = case when outcome = 'failed' then 'card_declined' else null end
  where id = $1::text returning *`;

/**
 * Charges a payment method in the business transaction `tx`: 422 `unprocessable` for an unknown
 * method or order or a currency unlike the order's; 409 `invalid_state_transition` for a
 * cancelled order; 422 `payment_exceeds_total` for an amount above what is left to pay on the
 * order (its total less its payments that succeeded or are processing; failed ones do not
 * count). A declined card fails at once; an amount above {@link ASYNC_THRESHOLD} stays
 * `processing` until {@link settleDuePayments}.
 *
 * @example
 * ```ts
 * const payment = await insertPayment(tx, account, body, { now: Date.now(), settleDelayMs: 2000 });
 * ```
 */
export async function insertPayment(
  tx: Db,
  account: string,
  body: z.infer<typeof CreatePaymentSchema>,
  options: NewPaymentOptions,
): Promise<z.infer<typeof PaymentSchema>> {
  const method = await findPaymentMethod(tx, account, body.paymentMethod);
  if (!method) throw unprocessable('paymentMethod', 'No such payment method on this account.');
  if (body.order !== undefined) {
    // The order row stays locked until this payment commits: payments of one order are judged
    // one after another, so two that each fit cannot together pass its total. The sum is read
    // by a statement of its own, after the lock: its snapshot then holds the payments committed
    // by whoever held the lock before (a subquery of the locking statement would not).
    const [order] = await tx.query<{ currency: string; status: string; total: string }>(LOCK_ORDER, [
      body.order,
      account,
    ]);
    if (!order) throw unprocessable('order', 'No such order on this account.');
    const [paid] = await tx.query<{ amount: string }>(ORDER_PAID, [account, body.order]);
    if (order.status === 'cancelled') {
      throw problem('invalid_state_transition', {
        detail: `Order ${body.order} is cancelled: it cannot be paid.`,
      });
    }
    if (order.currency !== body.currency) {
      throw unprocessable('currency', `The order is in ${order.currency}, not ${body.currency}.`);
    }
    const left = Number(order.total) - Number(paid?.amount ?? 0);
    if (body.amount > left) {
      throw problem('payment_exceeds_total', {
        detail: `At most ${Math.max(left, 0)} ${order.currency} minor units are left to pay on order ${body.order}.`,
        errors: [
          {
            field: 'amount',
            code: 'payment_exceeds_total',
            pointer: '#/amount',
            detail: `At most ${Math.max(left, 0)} can be paid.`,
          },
        ],
      });
    }
  }
  const outcome = method.card?.last4 === DECLINED_LAST4 ? 'failed' : 'succeeded';
  const later = body.amount > ASYNC_THRESHOLD;
  const at = new Date(options.now);
  const [row] = await tx.query<postgres.Row>(INSERT_PAYMENT, [
    opaqueId('pay'),
    account,
    later ? 'processing' : outcome,
    body.amount,
    body.currency,
    body.paymentMethod,
    body.order ?? null,
    body.description ?? null,
    !later && outcome === 'failed' ? 'card_declined' : null,
    outcome,
    later ? new Date(at.getTime() + options.settleDelayMs) : null,
    at,
  ]);
  if (!row) throw new Error('insert returned no row');
  const payment = toPayment(row);
  if (!later) {
    await emit(tx, {
      account,
      type: settledEvent(payment.status),
      resourceId: payment.id,
      object: payment,
      now: at.getTime(),
    });
  }
  return payment;
}

/** The payment `id` of `account`, or `undefined`. */
export async function findPayment(
  database: Database,
  account: string,
  id: string,
): Promise<z.infer<typeof PaymentSchema> | undefined> {
  const [row] = await database.db.query<postgres.Row>(SELECT_PAYMENT, [id, account]);
  return row ? toPayment(row) : undefined;
}

/**
 * Settles due `processing` payments (the background half of the 202 flow): each becomes its
 * decided outcome and emits payment.succeeded or payment.failed in the same transaction.
 * `skip locked` lets several worker processes share the work. Returns how many were settled.
 *
 * @example
 * ```ts
 * await settleDuePayments(sql, Date.now());
 * ```
 */
export async function settleDuePayments(
  database: Database,
  now: number,
  statementTimeoutMs?: number,
): Promise<number> {
  return database.transaction(async (_tx, tx) => {
    const db = tx;
    // The settlement loop's round must end: its statements are cut past this (SET LOCAL).
    if (statementTimeoutMs !== undefined)
      await db.query("select set_config('statement_timeout', $1::text, true)", [String(statementTimeoutMs)]);
    const at = new Date(now);
    const due = await db.query<{ id: string }>(DUE_PAYMENTS, [at]);
    for (const { id } of due) {
      const [row] = await db.query<postgres.Row>(SETTLE_PAYMENT, [id, at]);
      if (!row) continue;
      const payment = toPayment(row);
      await emit(tx, {
        account: row.account_id,
        type: settledEvent(payment.status),
        resourceId: payment.id,
        object: payment,
        now,
      });
    }
    return due.length;
  });
}
