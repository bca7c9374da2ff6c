import { WebhookEndpointSchema, webhookSchemas } from '@holdfast/webhook-portal';
import { z } from '@hono/zod-openapi';
import { EVENT_TYPE_SCOPES } from '../event-types';
import { livemode, timestamp } from './fields';

// Representations of the webhook resources (CONTRACT sections 5 and 6). Endpoints and
// deliveries are @holdfast/webhook-portal's: the events list and the inbound events use the same
// components (Event, EventType) as its routes.

const schemas = webhookSchemas(EVENT_TYPE_SCOPES);

/** An event type this server emits (the `EventType` component). */
export const EVENT_TYPE: typeof schemas.EventType = schemas.EventType;

/** An event as delivered (the `Event` component). */
export const EventSchema: typeof schemas.Event = schemas.Event;

export { deliverySort } from '@holdfast/webhook-portal';

// The API reference names where the adaptive limit is specified: CONTRACT section 10.
const concurrency = WebhookEndpointSchema.shape.concurrency;
z.globalRegistry.add(concurrency, {
  ...z.globalRegistry.get(concurrency),
  description: (concurrency.description ?? '').replace(/\.$/, ' (CONTRACT section 10).'),
});

export const INBOUND_STATUSES = ['pending', 'processed', 'stale', 'ignored', 'failed'] as const;

export const InboundEventSchema = z
  .object({
    id: z.string().meta({ example: 'inb_2x8Kd0qLw1Yc7VnR4sT9uA' }),
    livemode,
    receiver: z.string().meta({ description: 'The {name} of /hooks/{name}.' }),
    webhookId: z.string().meta({ description: 'The Webhook-Id header: the deduplication key.' }),
    type: z.string().nullable(),
    status: z.enum(INBOUND_STATUSES).meta({
      description:
        'pending (queued, or waiting to be retried), processed, stale (an equal or newer version of the resource was already applied), ignored (unknown event type, acknowledged with 200) or failed (processing failed 5 times; kept for inspection).',
    }),
    resource: z.string().nullable(),
    sequence: z.number().int().nullable(),
    data: z.unknown().meta({ description: 'The verified payload.' }),
    createdAt: timestamp.meta({ description: 'When it was received.' }),
    processedAt: timestamp.nullable(),
  })
  .meta({ id: 'InboundEvent' });
