import { idempotentStatement } from '@holdfast/idempotency';
import { withIdempotency } from '@holdfast/idempotency/hono';
import { ifMatchHeader } from '@holdfast/request-guards';
import { refuseFields } from '@holdfast/request-guards/hono';
import { z } from '@hono/zod-openapi';
import { answerRoute } from '../../api/answer-route';
import type { App, Deps } from '../../context';
import {
  cancelOrder,
  createRefund,
  deleteOrder,
  etag,
  getOrder,
  listOrders,
  listRefunds,
  newOrder,
  toOrder,
  updateOrder,
} from './repository';
import {
  CreateOrderSchema,
  CreateRefundSchema,
  cancelOrderRoute,
  createOrderRoute,
  createRefundRoute,
  deleteOrderRoute,
  getOrderRoute,
  listOrdersRoute,
  listRefundsRoute,
  orderParams,
  updateOrderRoute,
} from './schema';

/**
 * The order routes on the authenticated `/v1` app.
 *
 * @example
 * ```ts
 * orderRoutes(v1, deps);
 * ```
 */
export function orderRoutes(app: App, deps: Deps): void {
  const { db, transaction, keyring, now } = deps;
  // Stored answers live this long; the idempotency purge deletes them after.
  const retentionMs = Math.round(deps.config.idempotencyRetentionHours * 3_600_000);

  app.openapi(listOrdersRoute, async (c) => {
    const { account } = c.get('principal');
    return c.json(await listOrders(deps, keyring, account, c.req.valid('query')), 200);
  });

  // One statement on the happy path: the key's claim with its stored answer, the order and its
  // order.created event (bench/server/README.md says what each part buys). A key already held
  // writes nothing and is answered from what holds it: the replay, 422 or 409.
  answerRoute(app, createOrderRoute, CreateOrderSchema, z.object({}), async (c, { body }) => {
    const { account } = c.get('principal');
    const created = newOrder(account, body, now());
    return idempotentStatement(
      db,
      {
        key: c.req.header('idempotency-key'),
        account,
        method: c.req.method,
        path: c.req.path,
        // The body as sent (what the fingerprint covers), not as validated.
        body: c.get('jsonBody'),
        requestId: c.get('requestId'),
      },
      {
        answer: {
          status: 201,
          headers: { Location: `/v1/orders/${created.order.id}`, ETag: created.etag },
          body: created.order,
        },
        writes: created.writes,
      },
      { retentionMs },
    );
  });

  app.openapi(getOrderRoute, async (c) => {
    const { account } = c.get('principal');
    const row = await getOrder(deps, account, c.req.valid('param').id);
    c.header('ETag', etag(row));
    return c.json(toOrder(row), 200);
  });

  app.openapi(updateOrderRoute, async (c) => {
    const { account } = c.get('principal');
    const { id } = c.req.valid('param');
    const ifMatch = ifMatchHeader(c.req.header('if-match'));
    const row = await updateOrder(deps, account, id, c.req.valid('json'), ifMatch, now());
    c.header('ETag', etag(row));
    return c.json(toOrder(row), 200);
  });

  app.openapi(deleteOrderRoute, async (c) => {
    const { account } = c.get('principal');
    await deleteOrder(deps, account, c.req.valid('param').id, now());
    return c.body(null, 204);
  });

  app.openapi(cancelOrderRoute, async (c) => {
    refuseFields(c);
    const { account } = c.get('principal');
    const row = await cancelOrder(deps, account, c.req.valid('param').id, now());
    c.header('ETag', etag(row));
    return c.json(toOrder(row), 200);
  });

  app.openapi(listRefundsRoute, async (c) => {
    const { account } = c.get('principal');
    const page = await listRefunds(deps, keyring, account, c.req.valid('param').id, c.req.valid('query'));
    return c.json(page, 200);
  });

  answerRoute(
    app,
    createRefundRoute,
    CreateRefundSchema,
    orderParams,
    async (c, { body, params: { id } }) => {
      const { account } = c.get('principal');
      return withIdempotency(c, { transaction, account, retentionMs }, async (_tx, tx) => {
        const refund = await createRefund(tx, account, id, body, now());
        return { status: 201, headers: { Location: `/v1/orders/${id}/refunds` }, body: refund };
      });
    },
  );
}
