import { paginate } from '@holdfast/cursor-pagination';
import { listQueryShape, pageSchema } from '@holdfast/cursor-pagination/zod';
import { defineSortAllowlist, type SortAllowlist } from '@holdfast/sort-allowlist';
import { toNotification } from '@holdfast/webhook-delivery';
import { createRoute, z } from '@hono/zod-openapi';
import type { ManagementApp } from './app-types';
import type { Management } from './options';
import { problemResponses } from './problem-responses';
import { livemode, timestamp } from './schemas';

/** What the sender tells an account: an endpoint about to be disabled, an endpoint disabled. */
export const NotificationSchema: z.ZodObject<
  {
    id: z.ZodString;
    livemode: z.ZodBoolean;
    type: z.ZodString;
    message: z.ZodString;
    endpoint: z.ZodNullable<z.ZodString>;
    disableAt: z.ZodNullable<z.ZodISODateTime>;
    createdAt: z.ZodISODateTime;
  },
  z.core.$strip
> = z
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

const notificationSort: SortAllowlist<'createdAt'> = defineSortAllowlist({
  fields: { createdAt: { column: 'created_at', type: 'timestamp' } },
  id: { column: 'id' },
  default: '-createdAt',
});

const listNotifications = createRoute({
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

/** `/notifications`: what the sender told the account, newest first. */
export function notificationRoutes(app: ManagementApp, m: Management): void {
  const { db, keyring } = m;
  app.openapi(listNotifications, async (c) => {
    const { account, livemode } = c.get('portalCaller');
    const query = c.req.valid('query');
    const page = await paginate(db, {
      from: 'holdfast_notifications',
      where: { text: 'account_id = $1', values: [account] },
      allowlist: notificationSort,
      sort: query.sort,
      cursor: query.cursor,
      limit: query.limit,
      include: query.include,
      binding: { account, resource: 'notifications' },
      keyring,
      map: (row) => ({ ...toNotification(row), livemode }),
    });
    return c.json(page, 200);
  });
}
