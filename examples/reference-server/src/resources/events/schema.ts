import { listQueryShape, pageSchema } from '@holdfast/cursor-pagination/zod';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import { createRoute, z } from '@hono/zod-openapi';
import { idParam, json } from '../../api/fields';
import { problemResponses } from '../../api/problem-responses';
import { EventSchema } from '../../api/webhook-schemas';

const tags = ['Events'];

export const eventSort = defineSortAllowlist({
  fields: { createdAt: { column: 'created_at', type: 'timestamp' } },
  id: { column: 'id' },
  default: '-createdAt',
});

export const listEvents = createRoute({
  method: 'get',
  path: '/events',
  tags,
  summary: 'List events',
  description:
    'Events of this account and mode, as delivered to webhook endpoints (the payload of each delivery); only those whose resource the key may read (order.* needs orders:read, payment.* payments:read, subscription.* subscriptions:read).',
  request: { query: z.strictObject(listQueryShape(eventSort)) },
  responses: {
    200: { description: 'A page of events.', content: json(pageSchema(EventSchema)) },
    ...problemResponses([400, 401, 403]),
  },
});

export const getEvent = createRoute({
  method: 'get',
  path: '/events/{id}',
  tags,
  summary: 'Fetch an event',
  description:
    'Only an event whose resource the key may read (order.* needs orders:read, payment.* payments:read, subscription.* subscriptions:read); any other is 404, as if absent.',
  request: { params: idParam('evt', 'The event id (the Webhook-Id of its deliveries).') },
  responses: {
    200: { description: 'The event.', content: json(EventSchema) },
    ...problemResponses([400, 401, 403, 404]),
  },
});
