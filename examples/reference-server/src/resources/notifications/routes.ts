import { paginate } from '@holdfast/cursor-pagination';
import { toNotification } from '@holdfast/webhook-delivery';
import type { App, Deps } from '../../context';
import { listNotifications, notificationSort } from './schema';

/**
 * `/v1/notifications`: what the account is told, newest first.
 *
 * @example
 * ```ts
 * notificationRoutes(v1, deps);
 * ```
 */
export function notificationRoutes(app: App, deps: Deps): void {
  const { db, keyring } = deps;
  app.openapi(listNotifications, async (c) => {
    const { account, livemode } = c.get('principal');
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
