import { OpenAPIHono, z } from '@hono/zod-openapi';
import { EVENT_TYPES, type EventType } from './event-types';
import { OrderSchema, RefundSchema } from './resources/orders/schema';
import { PaymentSchema } from './routes/payments';
import { SubscriptionSchema } from './routes/subscriptions';
import { EventSchema } from './routes/webhook-schemas';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

// The outbound side of the API (CONTRACT section 10, "Outbound webhooks documented"): every event
// type the server emits, under OpenAPI 3.1's `webhooks`, with the payload built from the same zod
// schemas the server answers with (an event is `Event` with its `type` fixed and `data.object`
// the resource) and the three Standard Webhooks headers.

const RefundedOrderSchema = OrderSchema.extend({
  refund: RefundSchema.meta({ description: 'The refund this event reports.' }),
}).meta({ id: 'RefundedOrder' });

/** The resource each event type carries in `data.object`. */
export const EVENT_OBJECTS: Readonly<Record<EventType, z.ZodType>> = {
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

const headers = z.object({
  'webhook-id': z.string().max(255).meta({
    description: 'The event id: the same on every retry and replay. Deduplicate on it.',
    example: 'evt_2x8Kd0qLw1Yc7VnR4sT9uA',
  }),
  'webhook-timestamp': z
    .string()
    .max(15)
    .regex(/^[0-9]+$/)
    .meta({
      description:
        'Unix seconds when this attempt was signed (each attempt is signed afresh). Refuse it when more than 5 minutes from your clock.',
      example: '1764028800',
    }),
  'webhook-signature': z.string().max(1000).meta({
    description:
      'Space-separated signatures of "webhook-id.webhook-timestamp.body" over the exact body bytes (Standard Webhooks): v1,<base64 HMAC-SHA256 with the endpoint secret, whsec_> for endpoints with signatureScheme v1; v1a,<base64 ed25519 signature, verified with the endpoint publicKey, whpk_> for v1a. For 24 h after a rotation the old key signs too: one entry per key. Accept the delivery when any entry verifies.',
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  }),
});

function register(app: OpenAPIHono): void {
  for (const type of EVENT_TYPES) {
    const payload = EventSchema.extend({
      type: z.literal(type),
      data: z.object({ object: EVENT_OBJECTS[type] }),
    }).meta({ id: payloadSchemaName(type), description: WHAT[type] });
    app.openAPIRegistry.registerWebhook({
      method: 'post',
      path: type,
      operationId: `webhook${payloadSchemaName(type)}`,
      tags: ['Outbound webhooks'],
      summary: `${type} (sent to your endpoint)`,
      description: `${WHAT[type]} POSTed to every active endpoint subscribed to ${type} or *, signed as the endpoint's signatureScheme says. See /docs, "Receiving webhooks".`,
      security: [],
      request: {
        headers,
        body: { required: true, content: { 'application/json': { schema: payload } } },
      },
      responses: {
        200: {
          description:
            'Any 2xx acknowledges the delivery: answer fast and process later. 408, 429, 5xx, a timeout (10 s) or a connection error is retried (1m, 5m, 30m, 2h, 6h, 24h, with jitter; Retry-After is honoured), then the delivery is dead. 410 disables the endpoint. Any other status, redirects included, makes the delivery dead at once.',
        },
      },
    });
  }
}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Adds `webhooks` (one per event type) to the finished API document, and the payload schemas to
 * its components. Schemas the API already declares (`Order`, `Event`, ...) come from the same
 * zod objects, so they are the same and kept as they are.
 *
 * @example
 * ```ts
 * declareOutboundWebhooks(document); // document.webhooks['order.created'].post ...
 * ```
 */
export function declareOutboundWebhooks(document: JsonObject): void {
  const app = new OpenAPIHono();
  register(app);
  const generated: JsonObject = JSON.parse(
    JSON.stringify(app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 'webhooks', version: '1' } })),
  );
  document.webhooks = isObject(generated.webhooks) ? generated.webhooks : {};
  const components = isObject(document.components) ? document.components : {};
  const schemas = isObject(components.schemas) ? components.schemas : {};
  const more =
    isObject(generated.components) && isObject(generated.components.schemas)
      ? generated.components.schemas
      : {};
  for (const [name, schema] of Object.entries(more)) schemas[name] ??= schema;
  components.schemas = schemas;
  document.components = components;
}
