import { paginate } from '@holdfast/cursor-pagination';
import { withStatementTimeout } from '@holdfast/db';
import { refuseFields } from '@holdfast/request-guards/hono';
import { type App, type Deps, LIST_STATEMENT_TIMEOUT_MS } from '../../context';
import {
  cancelSubscription,
  findSubscription,
  insertSubscription,
  toSubscription,
  updateSubscription,
} from './repository';
import {
  cancelRoute,
  createSubscription,
  getRoute,
  listRoute,
  subscriptionSort,
  updateRoute,
} from './schema';

/**
 * The subscription routes on the authenticated `/v1` app.
 *
 * @example
 * ```ts
 * subscriptionRoutes(v1, deps);
 * ```
 */
export function subscriptionRoutes(app: App, deps: Deps): void {
  const { keyring, now } = deps;

  app.openapi(listRoute, async (c) => {
    const { account } = c.get('principal');
    const query = c.req.valid('query');
    const page = await withStatementTimeout(deps.transaction, LIST_STATEMENT_TIMEOUT_MS, (tx) =>
      paginate(tx, {
        from: 'holdfast_subscriptions',
        where: { text: 'account_id = $1', values: [account] },
        allowlist: subscriptionSort,
        sort: query.sort,
        cursor: query.cursor,
        limit: query.limit,
        include: query.include,
        binding: { account, resource: 'subscriptions' },
        keyring,
        map: toSubscription,
      }),
    );
    return c.json(page, 200);
  });

  app.openapi(createSubscription, async (c) => {
    const subscription = await insertSubscription(
      deps,
      c.get('principal').account,
      c.req.valid('json'),
      now(),
    );
    c.header('Location', `/v1/subscriptions/${subscription.id}`);
    return c.json(subscription, 201);
  });

  app.openapi(getRoute, async (c) => {
    const { id } = c.req.valid('param');
    return c.json(await findSubscription(deps, c.get('principal').account, id), 200);
  });

  app.openapi(updateRoute, async (c) => {
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    return c.json(await updateSubscription(deps, c.get('principal').account, id, body, now()), 200);
  });

  app.openapi(cancelRoute, async (c) => {
    refuseFields(c);
    const { id } = c.req.valid('param');
    return c.json(await cancelSubscription(deps, c.get('principal').account, id, now()), 200);
  });
}
