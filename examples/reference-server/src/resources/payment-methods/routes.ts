import { paginate } from '@holdfast/cursor-pagination';
import { problem } from '@holdfast/problem-details';
import type { App, Deps } from '../../context';
import { findPaymentMethod, insertPaymentMethod, removePaymentMethod, toPaymentMethod } from './repository';
import { createRoute_, deleteRoute, getRoute, listRoute, paymentMethodSort } from './schema';

/**
 * The payment method routes on the authenticated `/v1` app.
 *
 * @example
 * ```ts
 * paymentMethodRoutes(v1, deps);
 * ```
 */
export function paymentMethodRoutes(app: App, deps: Deps): void {
  const { db, keyring, now } = deps;
  const notFound = () => problem('not_found', { detail: 'No such payment method.' });

  app.openapi(listRoute, async (c) => {
    const { account } = c.get('principal');
    const query = c.req.valid('query');
    const page = await paginate(db, {
      from: 'holdfast_payment_methods',
      where: { text: 'account_id = $1 and deleted_at is null', values: [account] },
      allowlist: paymentMethodSort,
      sort: query.sort,
      cursor: query.cursor,
      limit: query.limit,
      include: query.include,
      binding: { account, resource: 'payment-methods' },
      keyring,
      map: toPaymentMethod,
    });
    return c.json(page, 200);
  });

  app.openapi(createRoute_, async (c) => {
    const method = await insertPaymentMethod(db, c.get('principal').account, c.req.valid('json'), now());
    c.header('Location', `/v1/payment-methods/${method.id}`);
    return c.json(method, 201);
  });

  app.openapi(getRoute, async (c) => {
    const { id } = c.req.valid('param');
    const row = await findPaymentMethod(db, c.get('principal').account, id);
    if (!row) throw notFound();
    return c.json(toPaymentMethod(row), 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const { id } = c.req.valid('param');
    if (!(await removePaymentMethod(db, c.get('principal').account, id, now()))) throw notFound();
    return c.body(null, 204);
  });
}
