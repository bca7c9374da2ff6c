import { listQueryShape, pageSchema } from '@holdfast/cursor-pagination/zod';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import { createRoute, z } from '@hono/zod-openapi';
import { idParam, json, livemode, locationHeader, timestamp } from '../../api/fields';
import { problemResponses } from '../../api/problem-responses';

// Payment methods (CONTRACT section 5): descriptive card details only, never a card number.
// A card whose last4 is 0002 is declined when charged (the test-card convention), so the
// failure path can be shown without a real processor.

export const paymentMethodSort = defineSortAllowlist({
  fields: { createdAt: { column: 'created_at', type: 'timestamp' } },
  id: { column: 'id' },
  default: '-createdAt',
});

const BRANDS = ['visa', 'mastercard', 'amex', 'discover', 'jcb', 'diners', 'unionpay', 'other'] as const;

const CardSchema = z
  .strictObject({
    brand: z.enum(BRANDS),
    last4: z
      .string()
      .regex(/^\d{4}$/, 'exactly four digits')
      .meta({ description: 'Last four digits; 0002 is declined when charged.', example: '4242' }),
    expMonth: z.number().int().min(1).max(12).meta({ example: 12 }),
    expYear: z.number().int().min(2000).max(2100).meta({ example: 2030 }),
  })
  .meta({ id: 'Card' });

export const PaymentMethodSchema = z
  .object({
    id: z.string().meta({ example: 'pm_2x8Kd0qLw1Yc7VnR4sT9uA' }),
    livemode,
    type: z.literal('card'),
    card: CardSchema,
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'PaymentMethod' });

export const CreatePaymentMethodSchema = z
  .strictObject({ type: z.literal('card'), card: CardSchema })
  .meta({ id: 'CreatePaymentMethod' });

const tags = ['Payment methods'];
const params = idParam('pm', 'The payment method id.');

export const listRoute = createRoute({
  method: 'get',
  path: '/payment-methods',
  tags,
  summary: 'List payment methods',
  request: { query: z.strictObject(listQueryShape(paymentMethodSort)) },
  responses: {
    200: { description: 'A page of payment methods.', content: json(pageSchema(PaymentMethodSchema)) },
    ...problemResponses([400, 401, 403]),
  },
});

export const createRoute_ = createRoute({
  method: 'post',
  path: '/payment-methods',
  tags,
  summary: 'Add a payment method',
  request: { body: { required: true, content: json(CreatePaymentMethodSchema) } },
  responses: {
    201: { description: 'Created.', headers: locationHeader, content: json(PaymentMethodSchema) },
    ...problemResponses([400, 401, 403, 413, 415]),
  },
});

export const getRoute = createRoute({
  method: 'get',
  path: '/payment-methods/{id}',
  tags,
  summary: 'Fetch a payment method',
  request: { params },
  responses: {
    200: { description: 'The payment method.', content: json(PaymentMethodSchema) },
    ...problemResponses([400, 401, 403, 404]),
  },
});

export const deleteRoute = createRoute({
  method: 'delete',
  path: '/payment-methods/{id}',
  tags,
  summary: 'Remove a payment method',
  description:
    'It can no longer be charged or subscribed with; past payments keep naming it. A repeated DELETE answers 404.',
  request: { params },
  responses: {
    204: { description: 'Removed.' },
    ...problemResponses([400, 401, 403, 404]),
  },
});
