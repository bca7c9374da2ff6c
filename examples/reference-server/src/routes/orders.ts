import { isLive } from '@holdfast/api-keys';
import { paginate } from '@holdfast/cursor-pagination/postgres';
import { listQueryShape, pageSchema } from '@holdfast/cursor-pagination/zod';
import { withIdempotency } from '@holdfast/idempotency/hono';
import { noFieldsBody } from '@holdfast/json-body';
import { refuseFields } from '@holdfast/json-body/hono';
import { opaqueId } from '@holdfast/opaque-id';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import { createRoute, z } from '@hono/zod-openapi';
import type postgres from 'postgres';
import type { App, Deps } from '../context';
import { emit } from '../outbox';
import { problem } from '../problems';
import { answerRoute } from './answer-route';
import { currency, json, livemode, locationHeader, metadata, minorUnits, timestamp } from './fields';
import { problemResponses } from './webhook-openapi';
import { idParam } from './webhook-schemas';

// Orders and their refunds (CONTRACT section 5). Moves: pending -> shipped (PATCH status),
// pending -> cancelled (POST cancel, repeatable); anything else is 409 invalid_state_transition.
// Refunds take any order that is not cancelled (the contract sets no state for them), up to the
// amount not yet refunded. PATCH takes If-Match with the ETag of GET; a stale one is 409.

export const ORDER_STATUSES = ['pending', 'shipped', 'cancelled'] as const;

export const orderSort = defineSortAllowlist({
  fields: {
    createdAt: { column: 'created_at', type: 'timestamp' },
    total: { column: 'total', type: 'number' },
    status: { column: 'status', type: 'enum', rank: ORDER_STATUSES },
  },
  id: { column: 'id' },
  default: '-createdAt',
});

export const refundSort = defineSortAllowlist({
  fields: {
    createdAt: { column: 'created_at', type: 'timestamp' },
    amount: { column: 'amount', type: 'number' },
  },
  id: { column: 'id' },
  default: '-createdAt',
});

export const OrderSchema = z
  .object({
    id: z.string().meta({ example: 'ord_2x8Kd0qLw1Yc7VnR4sT9uA' }),
    livemode,
    status: z.enum(ORDER_STATUSES),
    currency,
    total: minorUnits('The order total.'),
    amountRefunded: minorUnits('What has been refunded so far.'),
    description: z.string().nullable(),
    metadata,
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Order' });

export const CreateOrderSchema = z
  .strictObject({
    currency,
    total: minorUnits('The order total.'),
    description: z.string().max(1000).optional(),
    metadata: metadata.optional(),
  })
  .meta({ id: 'CreateOrder' });

export const UpdateOrderSchema = z
  .strictObject({
    status: z.enum(ORDER_STATUSES).optional().meta({
      description:
        'Only pending -> shipped is a move made here (cancel with POST /cancel); any other change of status is 409 invalid_state_transition. The current status is accepted as no change.',
    }),
    description: z.string().max(1000).nullable().optional(),
    metadata: metadata.optional(),
  })
  .meta({ id: 'UpdateOrder' });

export const RefundSchema = z
  .object({
    id: z.string().meta({ example: 're_2x8Kd0qLw1Yc7VnR4sT9uA' }),
    livemode,
    order: z.string().meta({ example: 'ord_2x8Kd0qLw1Yc7VnR4sT9uA' }),
    amount: minorUnits('The amount refunded.'),
    currency,
    reason: z.string().nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Refund' });

export const CreateRefundSchema = z
  .strictObject({
    amount: minorUnits('At most the part of the total not yet refunded.').pipe(z.number().min(1)),
    reason: z.string().max(500).optional(),
  })
  .meta({ id: 'CreateRefund' });

const tags = ['Orders'];
const params = idParam('ord', 'The order id.');
const idempotencyHeader = z.object({
  'idempotency-key': z
    .string()
    .optional()
    .meta({
      description:
        'Optional. At most 255 characters, bare or as a Structured Field string. A repeat with the same key and request replays the stored answer with Idempotent-Replayed: true.',
      param: { in: 'header' },
    }),
});
const etagHeader = z.object({ ETag: z.string().meta({ description: 'The version, for If-Match.' }) });

const listOrders = createRoute({
  method: 'get',
  path: '/orders',
  tags,
  summary: 'List orders',
  request: {
    query: z.strictObject({
      ...listQueryShape(orderSort),
      status: z.enum(ORDER_STATUSES).optional().meta({ description: 'Only orders in this status.' }),
    }),
  },
  responses: {
    200: { description: 'A page of orders.', content: json(pageSchema(OrderSchema)) },
    ...problemResponses([400, 401, 403]),
  },
});

const createOrder = createRoute({
  method: 'post',
  path: '/orders',
  tags,
  summary: 'Create an order',
  description: 'New orders are pending. Accepts Idempotency-Key.',
  request: { headers: idempotencyHeader, body: { required: true, content: json(CreateOrderSchema) } },
  responses: {
    201: {
      description: 'Created.',
      headers: locationHeader.extend(etagHeader.shape),
      content: json(OrderSchema),
    },
    ...problemResponses([400, 401, 403, 409, 413, 415, 422], {
      409: 'idempotency_key_in_use: the first request with this key is still running (Retry-After).',
      422: 'idempotency_key_reused: the key was used for a different request.',
    }),
  },
});

const getOrder = createRoute({
  method: 'get',
  path: '/orders/{id}',
  tags,
  summary: 'Fetch an order',
  request: { params },
  responses: {
    200: { description: 'The order.', headers: etagHeader, content: json(OrderSchema) },
    ...problemResponses([400, 401, 403, 404]),
  },
});

const updateOrder = createRoute({
  method: 'patch',
  path: '/orders/{id}',
  tags,
  summary: 'Update an order',
  description: 'Partial update. Send If-Match with the ETag of a GET to refuse a concurrent change (409).',
  request: {
    params,
    headers: z.object({
      'if-match': z
        .string()
        .optional()
        .meta({
          description:
            'The ETag of the version being changed; a different current version is 409 version_conflict.',
          param: { in: 'header' },
        }),
    }),
    body: { required: true, content: json(UpdateOrderSchema) },
  },
  responses: {
    200: { description: 'The updated order.', headers: etagHeader, content: json(OrderSchema) },
    ...problemResponses([400, 401, 403, 404, 409, 413, 415], {
      409: 'invalid_state_transition (only pending -> shipped) or version_conflict (If-Match).',
    }),
  },
});

const deleteOrder = createRoute({
  method: 'delete',
  path: '/orders/{id}',
  tags,
  summary: 'Delete a pending order',
  description:
    'Only while pending and without refunds (else 409 invalid_state_transition). A repeated DELETE answers 404.',
  request: { params },
  responses: {
    204: { description: 'Deleted.' },
    ...problemResponses([400, 401, 403, 404, 409], { 409: 'invalid_state_transition: not pending.' }),
  },
});

const cancelOrder = createRoute({
  method: 'post',
  path: '/orders/{id}/cancel',
  tags,
  summary: 'Cancel an order',
  description:
    'pending -> cancelled. Cancelling a cancelled order returns it unchanged; a shipped one is 409.',
  request: { params, body: noFieldsBody },
  responses: {
    200: { description: 'The cancelled order.', headers: etagHeader, content: json(OrderSchema) },
    ...problemResponses([400, 401, 403, 404, 409, 413, 415], { 409: 'invalid_state_transition: shipped.' }),
  },
});

const listRefunds = createRoute({
  method: 'get',
  path: '/orders/{id}/refunds',
  tags,
  summary: 'List the refunds of an order',
  request: { params, query: z.strictObject(listQueryShape(refundSort)) },
  responses: {
    200: { description: 'A page of refunds.', content: json(pageSchema(RefundSchema)) },
    ...problemResponses([400, 401, 403, 404]),
  },
});

const createRefund = createRoute({
  method: 'post',
  path: '/orders/{id}/refunds',
  tags,
  summary: 'Refund part or all of an order',
  description:
    'Emits order.refunded. Accepts Idempotency-Key. Location names the order’s refund list, where the refund appears (refunds have no URL of their own: nesting stops at one level).',
  request: {
    params,
    headers: idempotencyHeader,
    body: { required: true, content: json(CreateRefundSchema) },
  },
  responses: {
    201: { description: 'The refund.', headers: locationHeader, content: json(RefundSchema) },
    ...problemResponses([400, 401, 403, 404, 409, 413, 415, 422], {
      409: 'invalid_state_transition (the order is cancelled) or idempotency_key_in_use.',
      422: 'refund_exceeds_amount: more than is left unrefunded; or idempotency_key_reused.',
    }),
  },
});

/** The API representation of a `holdfast_orders` row. */
export function toOrder(row: postgres.Row): z.infer<typeof OrderSchema> {
  return {
    id: row.id,
    livemode: isLive(row.account_id),
    status: row.status,
    currency: row.currency,
    total: Number(row.total),
    amountRefunded: Number(row.amount_refunded),
    description: row.description,
    metadata: row.metadata,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function toRefund(row: postgres.Row): z.infer<typeof RefundSchema> {
  return {
    id: row.id,
    livemode: isLive(row.account_id),
    order: row.order_id,
    amount: Number(row.amount),
    currency: row.currency,
    reason: row.reason,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

const etag = (row: postgres.Row) => `"${row.version}"`;
const notFound = () => problem('not_found', { detail: 'No such order.' });
const transition = (from: string, to: string) =>
  problem('invalid_state_transition', { detail: `An order cannot move from ${from} to ${to}.` });

/** Whether an If-Match value names the current version (RFC 9110 section 13.1.1: strong comparison, or `*`). */
function ifMatchHolds(header: string, current: string): boolean {
  return header
    .split(',')
    .map((part) => part.trim())
    .some((tag) => tag === '*' || tag === current);
}

async function lockOrder(tx: postgres.TransactionSql, account: string, id: string): Promise<postgres.Row> {
  const [row] =
    await tx`select * from holdfast_orders where id = ${id} and account_id = ${account} for update`;
  if (!row) throw notFound();
  return row;
}

/**
 * The order routes on the authenticated `/v1` app.
 *
 * @example
 * ```ts
 * orderRoutes(v1, deps);
 * ```
 */
export function orderRoutes(app: App, deps: Deps): void {
  const { sql, keyring, now } = deps;
  // Stored answers live this long; the idempotency purge deletes them after (SPEC section 4).
  const retentionMs = Math.round(deps.config.idempotencyRetentionHours * 3_600_000);

  app.openapi(listOrders, async (c) => {
    const { account } = c.get('principal');
    const query = c.req.valid('query');
    const page = await paginate(sql, {
      from: sql`holdfast_orders`,
      where: sql`account_id = ${account}`,
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
    });
    return c.json(page, 200);
  });

  answerRoute(app, createOrder, CreateOrderSchema, z.object({}), async (c, { body }) => {
    const { account } = c.get('principal');
    return withIdempotency(c, { sql, account, retentionMs }, async (tx) => {
      const at = new Date(now());
      const [row] = await tx`
        insert into holdfast_orders (id, account_id, status, currency, total, description, metadata, created_at, updated_at)
        values (${opaqueId('ord')}, ${account}, 'pending', ${body.currency}, ${body.total}, ${body.description ?? null},
                ${tx.json(body.metadata ?? {})}, ${at}, ${at})
        returning *`;
      if (!row) throw new Error('insert returned no row');
      const order = toOrder(row);
      await emit(tx, {
        account,
        type: 'order.created',
        resourceId: order.id,
        object: order,
        now: at.getTime(),
      });
      return {
        status: 201,
        headers: { Location: `/v1/orders/${order.id}`, ETag: etag(row) },
        body: order,
      };
    });
  });

  app.openapi(getOrder, async (c) => {
    const { account } = c.get('principal');
    const { id } = c.req.valid('param');
    const [row] = await sql`select * from holdfast_orders where id = ${id} and account_id = ${account}`;
    if (!row) throw notFound();
    c.header('ETag', etag(row));
    return c.json(toOrder(row), 200);
  });

  app.openapi(updateOrder, async (c) => {
    const { account } = c.get('principal');
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    const ifMatch = c.req.header('if-match');
    const row = await sql.begin(async (tx) => {
      const current = await lockOrder(tx, account, id);
      if (ifMatch !== undefined && !ifMatchHolds(ifMatch, etag(current))) {
        throw problem('version_conflict', {
          detail: `The order is at version ${etag(current)}, not ${ifMatch}. Fetch it again and retry.`,
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
      const at = new Date(now());
      const [updated] = await tx`
        update holdfast_orders set
          status = ${status},
          description = ${body.description === undefined ? current.description : body.description},
          metadata = ${tx.json(body.metadata ?? current.metadata)},
          version = version + 1,
          updated_at = ${at}
        where id = ${id}
        returning *`;
      if (!updated) throw notFound();
      const order = toOrder(updated);
      await emit(tx, { account, type: 'order.updated', resourceId: id, object: order, now: at.getTime() });
      return updated;
    });
    c.header('ETag', etag(row));
    return c.json(toOrder(row), 200);
  });

  app.openapi(deleteOrder, async (c) => {
    const { account } = c.get('principal');
    const { id } = c.req.valid('param');
    await sql.begin(async (tx) => {
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
      await tx`delete from holdfast_orders where id = ${id}`;
      const at = now();
      await emit(tx, {
        account,
        type: 'order.deleted',
        resourceId: id,
        object: { ...toOrder(current), updatedAt: new Date(at).toISOString() },
        now: at,
      });
    });
    return c.body(null, 204);
  });

  app.openapi(cancelOrder, async (c) => {
    refuseFields(c);
    const { account } = c.get('principal');
    const { id } = c.req.valid('param');
    const row = await sql.begin(async (tx) => {
      const current = await lockOrder(tx, account, id);
      if (current.status === 'cancelled') return current;
      if (current.status !== 'pending') throw transition(current.status, 'cancelled');
      const at = new Date(now());
      const [updated] = await tx`
        update holdfast_orders set status = 'cancelled', version = version + 1, updated_at = ${at}
        where id = ${id} returning *`;
      if (!updated) throw notFound();
      await emit(tx, {
        account,
        type: 'order.cancelled',
        resourceId: id,
        object: toOrder(updated),
        now: at.getTime(),
      });
      return updated;
    });
    c.header('ETag', etag(row));
    return c.json(toOrder(row), 200);
  });

  app.openapi(listRefunds, async (c) => {
    const { account } = c.get('principal');
    const { id } = c.req.valid('param');
    const query = c.req.valid('query');
    const [order] = await sql`select id from holdfast_orders where id = ${id} and account_id = ${account}`;
    if (!order) throw notFound();
    const page = await paginate(sql, {
      from: sql`holdfast_refunds`,
      where: sql`account_id = ${account} and order_id = ${id}`,
      allowlist: refundSort,
      sort: query.sort,
      cursor: query.cursor,
      limit: query.limit,
      include: query.include,
      binding: { account, resource: `orders/${id}/refunds` },
      keyring,
      map: toRefund,
    });
    return c.json(page, 200);
  });

  answerRoute(app, createRefund, CreateRefundSchema, params, async (c, { body, params: { id } }) => {
    const { account } = c.get('principal');
    return withIdempotency(c, { sql, account, retentionMs }, async (tx) => {
      const order = await lockOrder(tx, account, id);
      if (order.status === 'cancelled') {
        throw problem('invalid_state_transition', {
          detail: 'A cancelled order cannot be refunded.',
        });
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
      const at = new Date(now());
      const [refund] = await tx`
        insert into holdfast_refunds (id, account_id, order_id, amount, currency, reason, created_at, updated_at)
        values (${opaqueId('re')}, ${account}, ${id}, ${body.amount}, ${order.currency}, ${body.reason ?? null}, ${at}, ${at})
        returning *`;
      const [updated] = await tx`
        update holdfast_orders set amount_refunded = amount_refunded + ${body.amount}, version = version + 1, updated_at = ${at}
        where id = ${id} returning *`;
      if (!refund || !updated) throw new Error('refund insert returned no row');
      const result = toRefund(refund);
      await emit(tx, {
        account,
        type: 'order.refunded',
        resourceId: id,
        object: { ...toOrder(updated), refund: result },
        now: at.getTime(),
      });
      return { status: 201, headers: { Location: `/v1/orders/${id}/refunds` }, body: result };
    });
  });
}
