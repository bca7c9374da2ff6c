import { listQueryShape, pageSchema } from '@holdfast/cursor-pagination/zod';
import { defineSortAllowlist, statusSorts } from '@holdfast/sort-allowlist';
import { createRoute, z } from '@hono/zod-openapi';
import { currency, idParam, json, livemode, locationHeader, minorUnits, timestamp } from '../../api/fields';
import { problemResponses } from '../../api/problem-responses';

// Payments (CONTRACT sections 5 and 7). POST requires Idempotency-Key; the insert, the event
// and the stored answer commit in one transaction. The simulated processor's rules, documented
// in the OpenAPI document and the README:
// - an amount above ASYNC_THRESHOLD minor units settles later: 202 with Location and status
//   `processing`; the settlement worker finishes it after HOLDFAST_PAYMENT_SETTLE_DELAY;
// - a card whose last4 is 0002 is declined (status `failed`, failureReason `card_declined`);
// - settling emits payment.succeeded or payment.failed.

/** Amounts above this (minor units) are reviewed and settle later (202). */
export const ASYNC_THRESHOLD = 100_000;
/** A card whose last4 is this is declined. */
export const DECLINED_LAST4 = '0002';

export const PAYMENT_STATUSES = ['processing', 'succeeded', 'failed'] as const;

export const paymentSort = defineSortAllowlist({
  fields: {
    createdAt: { column: 'created_at', type: 'timestamp', fineGrained: true },
    amount: { column: 'amount', type: 'number', fineGrained: true },
    status: { column: 'status', type: 'enum', rank: PAYMENT_STATUSES },
  },
  id: { column: 'id' },
  default: '-createdAt',
  // Every order is served by an index (the baseline migration): these exactly, and any longer
  // one through its prefix up to a fine-grained key. None of the contract's sorts is refused.
  indexed: statusSorts(['createdAt', 'amount']),
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

export const listRoute = createRoute({
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

export const createPayment = createRoute({
  method: 'post',
  path: '/payments',
  tags,
  summary: 'Create a payment',
  description: `Requires Idempotency-Key: a repeat with the same key and body replays the stored answer (Idempotent-Replayed: true) and charges nothing. Amounts up to ${ASYNC_THRESHOLD} minor units settle at once (201); larger ones answer 202 with Location and status processing, and settle in the background (poll the Location, or listen for payment.succeeded / payment.failed). A card ending in ${DECLINED_LAST4} is declined. With \`order\`: the order must not be cancelled (409 invalid_state_transition), the currency must be the order's (422 unprocessable), and the amount at most what is left to pay, its total less its payments that succeeded or are still processing (422 payment_exceeds_total); payments of one order are judged one at a time, so parallel ones cannot together pass the total.`,
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
      409: 'idempotency_key_in_use (the first request with this key is still running; Retry-After) or invalid_state_transition (the order is cancelled).',
      422: 'idempotency_key_reused (the key was used for a different request), unprocessable (unknown payment method or order, or a currency unlike the order’s) or payment_exceeds_total (the amount is more than what is left to pay on the order: its total less its payments that succeeded or are processing).',
    }),
  },
});

export const getRoute = createRoute({
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
