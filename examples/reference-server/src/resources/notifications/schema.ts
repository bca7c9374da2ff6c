import { listQueryShape, pageSchema } from '@holdfast/cursor-pagination/zod';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import { createRoute, z } from '@hono/zod-openapi';
import { livemode, timestamp } from '../../api/fields';
import { problemResponses } from '../../api/problem-responses';

export const NotificationSchema = z
  .object({
    id: z.string(),
    livemode,
    type: z.string().meta({ example: 'webhook_endpoint.disabling' }),
    message: z.string(),
    endpoint: z.string().nullable(),
    disableAt: timestamp.nullable(),
    createdAt: timestamp,
  })
  .meta({ id: 'Notification' });

export const notificationSort = defineSortAllowlist({
  fields: { createdAt: { column: 'created_at', type: 'timestamp' } },
  id: { column: 'id' },
  default: '-createdAt',
});

export const listNotifications = createRoute({
  method: 'get',
  path: '/notifications',
  tags: ['Notifications'],
  summary: 'List notifications',
  description:
    'What the account is told: an endpoint about to be disabled for failing (at least 24 h before), an endpoint disabled (410 Gone or N failing days).',
  request: { query: z.strictObject(listQueryShape(notificationSort)) },
  responses: {
    200: {
      description: 'A page of notifications.',
      content: { 'application/json': { schema: pageSchema(NotificationSchema) } },
    },
    ...problemResponses([400, 401, 403]),
  },
});
