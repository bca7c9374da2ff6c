import { paginate } from '@holdfast/cursor-pagination/postgres';
import { listQueryShape, pageSchema } from '@holdfast/cursor-pagination/zod';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import { toNotification } from '@holdfast/webhook-delivery/postgres';
import { createRoute, z } from '@hono/zod-openapi';
import type { App, Deps } from '../context';
import { problemResponses } from './webhook-openapi';
import { NotificationSchema } from './webhook-schemas';

const notificationSort = defineSortAllowlist({
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

/**
 * `/v1/notifications`: what the account is told, newest first.
 *
 * @example
 * ```ts
 * notificationRoutes(v1, deps);
 * ```
 */
export function notificationRoutes(app: App, deps: Deps): void {
  const { sql, keyring } = deps;
  app.openapi(listNotifications, async (c) => {
    const { account, livemode } = c.get('principal');
    const query = c.req.valid('query');
    const page = await paginate(sql, {
      from: sql`holdfast_notifications`,
      where: sql`account_id = ${account}`,
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
