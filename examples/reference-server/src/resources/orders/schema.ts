import { listQueryShape, pageSchema } from '@holdfast/cursor-pagination/zod';
import { noFieldsBody } from '@holdfast/request-guards';
import { defineSortAllowlist, statusSorts } from '@holdfast/sort-allowlist';
import { createRoute, z } from '@hono/zod-openapi';
import {
  currency,
  idParam,
  json,
  livemode,
  locationHeader,
  metadata,
  minorUnits,
  timestamp,
} from '../../api/fields';
import { problemResponses } from '../../api/problem-responses';

// Orders and their refunds: the API's shapes (zod, which validates and documents) and the
// OpenAPI operations. The SQL and the state machine are in repository.ts, the routes in routes.ts.

export const ORDER_STATUSES = ['pending', 'shipped', 'cancelled'] as const;

export const orderSort = defineSortAllowlist({
  fields: {
    createdAt: { column: 'created_at', type: 'timestamp', fineGrained: true },
    total: { column: 'total', type: 'number', fineGrained: true },
    status: { column: 'status', type: 'enum', rank: ORDER_STATUSES },
  },
  id: { column: 'id' },
  default: '-createdAt',
  // Every order is served by an index (the baseline migration): these exactly, and any longer
  // one through its prefix up to a fine-grained key. None of the contract's sorts is refused.
  indexed: statusSorts(['createdAt', 'total']),
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
/** The `{id}` path parameter of an order. */
export const orderParams = idParam('ord', 'The order id.');
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

export const listOrdersRoute = createRoute({
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

export const createOrderRoute = createRoute({
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

export const getOrderRoute = createRoute({
  method: 'get',
  path: '/orders/{id}',
  tags,
  summary: 'Fetch an order',
  request: { params: orderParams },
  responses: {
    200: { description: 'The order.', headers: etagHeader, content: json(OrderSchema) },
    ...problemResponses([400, 401, 403, 404]),
  },
});

export const updateOrderRoute = createRoute({
  method: 'patch',
  path: '/orders/{id}',
  tags,
  summary: 'Update an order',
  description: 'Partial update. Send If-Match with the ETag of a GET to refuse a concurrent change (409).',
  request: {
    params: orderParams,
    headers: z.object({
      'if-match': z
        .string()
        .optional()
        .meta({
          description:
            'The ETag of the version being changed (RFC 9110 section 13.1.1): `*` alone, or a list of entity tags compared strongly, so a weak `W/` tag never matches. A current version the value does not name is 409 version_conflict; a value outside the grammar (such as `"3", *`) is 400 validation_failed.',
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

export const deleteOrderRoute = createRoute({
  method: 'delete',
  path: '/orders/{id}',
  tags,
  summary: 'Delete a pending order',
  description:
    'Only while pending and without refunds (else 409 invalid_state_transition). A repeated DELETE answers 404.',
  request: { params: orderParams },
  responses: {
    204: { description: 'Deleted.' },
    ...problemResponses([400, 401, 403, 404, 409], { 409: 'invalid_state_transition: not pending.' }),
  },
});

export const cancelOrderRoute = createRoute({
  method: 'post',
  path: '/orders/{id}/cancel',
  tags,
  summary: 'Cancel an order',
  description:
    'pending -> cancelled. Cancelling a cancelled order returns it unchanged; a shipped one is 409.',
  request: { params: orderParams, body: noFieldsBody },
  responses: {
    200: { description: 'The cancelled order.', headers: etagHeader, content: json(OrderSchema) },
    ...problemResponses([400, 401, 403, 404, 409, 413, 415], { 409: 'invalid_state_transition: shipped.' }),
  },
});

export const listRefundsRoute = createRoute({
  method: 'get',
  path: '/orders/{id}/refunds',
  tags,
  summary: 'List the refunds of an order',
  request: { params: orderParams, query: z.strictObject(listQueryShape(refundSort)) },
  responses: {
    200: { description: 'A page of refunds.', content: json(pageSchema(RefundSchema)) },
    ...problemResponses([400, 401, 403, 404]),
  },
});

export const createRefundRoute = createRoute({
  method: 'post',
  path: '/orders/{id}/refunds',
  tags,
  summary: 'Refund part or all of an order',
  description:
    'Emits order.refunded. Accepts Idempotency-Key. Location names the order’s refund list, where the refund appears (refunds have no URL of their own: nesting stops at one level).',
  request: {
    params: orderParams,
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

/** An order as the API shows it. */
export type Order = z.infer<typeof OrderSchema>;
/** A refund as the API shows it. */
export type Refund = z.infer<typeof RefundSchema>;
/** The body of POST /v1/orders, validated. */
export type CreateOrder = z.infer<typeof CreateOrderSchema>;
/** The body of PATCH /v1/orders/{id}, validated. */
export type UpdateOrder = z.infer<typeof UpdateOrderSchema>;
/** The body of POST /v1/orders/{id}/refunds, validated. */
export type CreateRefund = z.infer<typeof CreateRefundSchema>;
