import { declareWebhooks } from '@holdfast/webhook-delivery/openapi';
import { z } from '@hono/zod-openapi';
import { EventSchema } from './api/webhook-schemas';
import { examplePayload } from './event-examples';
import { EVENT_TYPES, type EventType } from './event-types';
import type { JsonObject } from './json-value';
import { OrderSchema, RefundSchema } from './resources/orders/schema';
import { PaymentSchema } from './resources/payments/schema';
import { SubscriptionSchema } from './resources/subscriptions/schema';

// The outbound side of the API (CONTRACT section 10, "Outbound webhooks documented"): every event
// type the server emits, under OpenAPI 3.1's `webhooks`, with the payload built from the same zod
// schemas the server answers with (an event is `Event` with its `type` fixed and `data.object`
// the resource) and the three Standard Webhooks headers.

const RefundedOrderSchema = OrderSchema.extend({
  refund: RefundSchema.meta({ description: 'The refund this event reports.' }),
}).meta({ id: 'RefundedOrder' });

/** The resource each event type carries in `data.object`. */
const EVENT_OBJECTS: Readonly<Record<EventType, z.ZodType>> = {
  'order.created': OrderSchema,
  'order.updated': OrderSchema,
  'order.cancelled': OrderSchema,
  'order.deleted': OrderSchema,
  'order.refunded': RefundedOrderSchema,
  'payment.succeeded': PaymentSchema,
  'payment.failed': PaymentSchema,
  'subscription.created': SubscriptionSchema,
  'subscription.updated': SubscriptionSchema,
};

const WHAT: Readonly<Record<EventType, string>> = {
  'order.created': 'An order was created (status pending).',
  'order.updated': 'An order changed (PATCH: status, description or metadata).',
  'order.cancelled': 'An order was cancelled.',
  'order.deleted':
    'A pending order was deleted; data.object is the order as it was, updatedAt the deletion time.',
  'order.refunded': 'An order was refunded, in part or in full; data.object.refund is the refund.',
  'payment.succeeded': 'A payment settled.',
  'payment.failed': 'A payment failed.',
  'subscription.created': 'A subscription was created.',
  'subscription.updated':
    'A subscription changed (plan, quantity, metadata or status, cancellation included).',
};

/** `order.refunded` → `OrderRefundedEvent`: the component name of its payload. */
export function payloadSchemaName(type: EventType): string {
  return `${type
    .split('.')
    .map((w) => (w[0] ?? '').toUpperCase() + w.slice(1))
    .join('')}Event`;
}

/**
 * Adds `webhooks` (one per event type, `declareWebhooks` of `@holdfast/webhook-delivery/openapi`)
 * to the finished API document, with the payload of each built from the same zod schemas the
 * API answers with, so `Order`, `Event`, ... are the same components.
 *
 * @example
 * ```ts
 * declareOutboundWebhooks(document); // document.webhooks['order.created'].post ...
 * ```
 */
export function declareOutboundWebhooks(document: JsonObject): void {
  const webhooks = EVENT_TYPES.map((type) => ({
    type,
    name: payloadSchemaName(type),
    description: WHAT[type],
    payload: EventSchema.extend({
      type: z.literal(type),
      data: z.object({ object: EVENT_OBJECTS[type] }),
    }).meta({
      id: payloadSchemaName(type),
      description: `${WHAT[type]} The example is what POST /v1/webhook-endpoints/{id}/test sends (with "test": true).`,
      example: examplePayload(type),
    }),
  }));
  declareWebhooks(document, webhooks, { note: ' See /docs, "Receiving webhooks".' });
}
