import { isLive } from '@holdfast/api-keys';
import { paginate } from '@holdfast/cursor-pagination/postgres';
import { listQueryShape, pageSchema } from '@holdfast/cursor-pagination/zod';
import { withIdempotency } from '@holdfast/idempotency/hono';
import { opaqueId } from '@holdfast/opaque-id';
import { problem } from '@holdfast/problem-details';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import { createRoute, z } from '@hono/zod-openapi';
import type postgres from 'postgres';
import type { App, Deps } from '../context';
import { emit } from '../outbox';
import { answerRoute } from './answer-route';
import { currency, json, livemode, locationHeader, minorUnits, timestamp } from './fields';
import { findPaymentMethod } from './payment-methods';
import { problemResponses } from './webhook-openapi';
import { idParam } from './webhook-schemas';

// Payments (CONTRACT sections 5 and 7). POST requires Idempotency-Key; the insert, the event
// and the stored answer commit in one transaction. The simulated processor's rules, documented
// in the OpenAPI document and the README:
// - an amount above ASYNC_THRESHOLD minor units settles later: 202 with Location and status
//   `processing`; the settlement worker finishes it after HOLDFAST_PAYMENT_SETTLE_DELAY;
// - a card whose last4 is 0002 is declined (status `failed`, failureReason `card_declined`);
// - settling emits payment.succeeded or payment.failed.

/** Amounts above this (minor units) are reviewed and settle later (202). */
export const ASYNC_THRESHOLD = 100_000;
const DECLINED_LAST4 = '0002';

export const PAYMENT_STATUSES = ['processing', 'succeeded', 'failed'] as const;

/** The event a settled payment emits; a payment still processing has none to emit. */
function settledEvent(status: (typeof PAYMENT_STATUSES)[number]): 'payment.succeeded' | 'payment.failed' {
  if (status === 'processing') throw new Error('a processing payment has not settled');
  return `payment.${status}`;
}

export const paymentSort = defineSortAllowlist({
  fields: {
    createdAt: { column: 'created_at', type: 'timestamp' },
    amount: { column: 'amount', type: 'number' },
    status: { column: 'status', type: 'enum', rank: PAYMENT_STATUSES },
  },
  id: { column: 'id' },
  default: '-createdAt',
});

export const PaymentSchema = z
  .object({
    id: z.string().meta({ example: 'pay_2x8Kd0qLw1Yc7VnR4sT9uA' }),
    livemode,
    status: z.enum(PAYMENT_STATUSES),
    amount: minorUnits('The amount charged.'),
    currency,
    paymentMethod: z.string().meta({ example: 'pm_2x8Kd0qLw1Yc7VnR4sT9uA' }),
    order: z.string().nullable(),
    description: z.string().nullable(),
    failureReason: z.string().nullable().meta({ description: 'Why it failed, such as card_declined.' }),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Payment' });

export const CreatePaymentSchema = z
  .strictObject({
    amount: minorUnits(`Above ${ASYNC_THRESHOLD} the payment settles later (202).`).pipe(z.number().min(1)),
    currency,
    paymentMethod: z.string().min(1).max(255).meta({ description: 'A payment method id of this account.' }),
    order: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .meta({ description: 'An order of this account, in the same currency.' }),
    description: z.string().max(1000).optional(),
  })
  .meta({ id: 'CreatePayment' });

const tags = ['Payments'];

const listRoute = createRoute({
  method: 'get',
  path: '/payments',
  tags,
  summary: 'List payments',
  request: {
    query: z.strictObject({
      ...listQueryShape(paymentSort),
      status: z.enum(PAYMENT_STATUSES).optional().meta({ description: 'Only payments in this status.' }),
      order: z.string().min(1).max(255).optional().meta({ description: 'Only payments for this order.' }),
    }),
  },
  responses: {
    200: { description: 'A page of payments.', content: json(pageSchema(PaymentSchema)) },
    ...problemResponses([400, 401, 403]),
  },
});

const createPayment = createRoute({
  method: 'post',
  path: '/payments',
  tags,
  summary: 'Create a payment',
  description: `Requires Idempotency-Key: a repeat with the same key and body replays the stored answer (Idempotent-Replayed: true) and charges nothing. Amounts up to ${ASYNC_THRESHOLD} minor units settle at once (201); larger ones answer 202 with Location and status processing, and settle in the background (poll the Location, or listen for payment.succeeded / payment.failed). A card ending in ${DECLINED_LAST4} is declined.`,
  request: {
    headers: z.object({
      'idempotency-key': z
        .string()
        .optional()
        .meta({
          description:
            'Required (400 idempotency_key_required without it). At most 255 characters, bare or as a Structured Field string; kept 24 hours.',
          param: { in: 'header', required: true },
        }),
    }),
    body: { required: true, content: json(CreatePaymentSchema) },
  },
  responses: {
    201: { description: 'Settled at once.', headers: locationHeader, content: json(PaymentSchema) },
    202: {
      description: 'Accepted; settles later. Location is the status URL (the payment).',
      headers: locationHeader,
      content: json(PaymentSchema),
    },
    ...problemResponses([400, 401, 403, 409, 413, 415, 422], {
      400: 'idempotency_key_required, validation_failed, unknown_field or invalid_json.',
      409: 'idempotency_key_in_use: the first request with this key is still running (Retry-After).',
      422: 'idempotency_key_reused (the key was used for a different request) or unprocessable (unknown payment method or order, or a currency unlike the order’s).',
    }),
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/payments/{id}',
  tags,
  summary: 'Fetch a payment',
  description: 'The status URL of a payment that settles later.',
  request: { params: idParam('pay', 'The payment id.') },
  responses: {
    200: { description: 'The payment.', content: json(PaymentSchema) },
    ...problemResponses([400, 401, 403, 404]),
  },
});

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
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

const unprocessable = (field: string, detail: string) =>
  problem('unprocessable', {
    detail,
    errors: [{ field, code: 'unprocessable', pointer: `#/${field}`, detail }],
  });

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
export async function settleDuePayments(sql: postgres.Sql, now: number): Promise<number> {
  return sql.begin(async (tx) => {
    const at = new Date(now);
    const due = await tx`
      select id from holdfast_payments
      where status = 'processing' and settle_at <= ${at}
      order by settle_at limit 50 for update skip locked`;
    for (const { id } of due) {
      const [row] = await tx`
        update holdfast_payments set status = outcome, settle_at = null, updated_at = ${at},
          failure_reason = case when outcome = 'failed' then 'card_declined' else null end
        where id = ${id} returning *`;
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

/**
 * The payment routes on the authenticated `/v1` app.
 *
 * @example
 * ```ts
 * paymentRoutes(v1, deps);
 * ```
 */
export function paymentRoutes(app: App, deps: Deps): void {
  const { sql, keyring, now, config } = deps;
  // Stored answers live this long; the idempotency purge deletes them after (SPEC section 4).
  const retentionMs = Math.round(config.idempotencyRetentionHours * 3_600_000);

  app.openapi(listRoute, async (c) => {
    const { account } = c.get('principal');
    const query = c.req.valid('query');
    const page = await paginate(sql, {
      from: sql`holdfast_payments`,
      where: sql`account_id = ${account}`,
      allowlist: paymentSort,
      sort: query.sort,
      cursor: query.cursor,
      limit: query.limit,
      include: query.include,
      filterColumns: { status: 'status', order: 'order_id' },
      filter: { status: query.status, order: query.order },
      binding: { account, resource: 'payments' },
      keyring,
      map: toPayment,
    });
    return c.json(page, 200);
  });

  answerRoute(app, createPayment, CreatePaymentSchema, z.object({}), async (c, { body }) => {
    const { account } = c.get('principal');
    return withIdempotency(c, { sql, account, required: true, retentionMs }, async (tx) => {
      const method = await findPaymentMethod(tx, account, body.paymentMethod);
      if (!method) throw unprocessable('paymentMethod', 'No such payment method on this account.');
      if (body.order !== undefined) {
        const [order] = await tx`
          select currency from holdfast_orders where id = ${body.order} and account_id = ${account}`;
        if (!order) throw unprocessable('order', 'No such order on this account.');
        if (order.currency !== body.currency) {
          throw unprocessable('currency', `The order is in ${order.currency}, not ${body.currency}.`);
        }
      }
      const outcome = method.card?.last4 === DECLINED_LAST4 ? 'failed' : 'succeeded';
      const later = body.amount > ASYNC_THRESHOLD;
      const at = new Date(now());
      const [row] = await tx`
        insert into holdfast_payments (id, account_id, status, amount, currency, payment_method_id, order_id,
          description, failure_reason, outcome, settle_at, created_at, updated_at)
        values (${opaqueId('pay')}, ${account}, ${later ? 'processing' : outcome}, ${body.amount}, ${body.currency},
          ${body.paymentMethod}, ${body.order ?? null}, ${body.description ?? null},
          ${!later && outcome === 'failed' ? 'card_declined' : null}, ${outcome},
          ${later ? new Date(at.getTime() + config.paymentSettleDelayMs) : null}, ${at}, ${at})
        returning *`;
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
      return {
        status: later ? 202 : 201,
        headers: { Location: `/v1/payments/${payment.id}` },
        body: payment,
      };
    });
  });

  app.openapi(getRoute, async (c) => {
    const { id } = c.req.valid('param');
    const [row] = await sql`
      select * from holdfast_payments where id = ${id} and account_id = ${c.get('principal').account}`;
    if (!row) throw problem('not_found', { detail: 'No such payment.' });
    return c.json(toPayment(row), 200);
  });
}
