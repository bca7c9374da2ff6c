import { paginate } from '@holdfast/cursor-pagination';
import { withStatementTimeout } from '@holdfast/db';
import { withIdempotency } from '@holdfast/idempotency/hono';
import { problem } from '@holdfast/problem-details';
import { z } from '@hono/zod-openapi';
import { answerRoute } from '../../api/answer-route';
import { type App, type Deps, LIST_STATEMENT_TIMEOUT_MS } from '../../context';
import { findPayment, insertPayment, toPayment } from './repository';
import { CreatePaymentSchema, createPayment, getRoute, listRoute, paymentSort } from './schema';

/**
 * The payment routes on the authenticated `/v1` app. POST requires Idempotency-Key; the insert,
 * the event and the stored answer commit in one transaction.
 *
 * @example
 * ```ts
 * paymentRoutes(v1, deps);
 * ```
 */
export function paymentRoutes(app: App, deps: Deps): void {
  const { transaction, keyring, now, config } = deps;
  // Stored answers live this long; the idempotency purge deletes them after (SPEC section 4).
  const retentionMs = Math.round(config.idempotencyRetentionHours * 3_600_000);

  app.openapi(listRoute, async (c) => {
    const { account } = c.get('principal');
    const query = c.req.valid('query');
    const page = await withStatementTimeout(deps.transaction, LIST_STATEMENT_TIMEOUT_MS, (tx) =>
      paginate(tx, {
        from: 'holdfast_payments',
        where: { text: 'account_id = $1', values: [account] },
        allowlist: paymentSort,
        sort: query.sort,
        cursor: query.cursor,
        limit: query.limit,
        include: query.include,
        filterColumns: { status: 'status', order: 'order_id' },
        filter: { status: query.status, order: query.order },
        binding: { account, resource: 'payments' },
        keyring,
        map: toPayment,
      }),
    );
    return c.json(page, 200);
  });

  answerRoute(app, createPayment, CreatePaymentSchema, z.object({}), async (c, { body }) => {
    const { account } = c.get('principal');
    return withIdempotency(c, { transaction, account, required: true, retentionMs }, async (_tx, tx) => {
      const payment = await insertPayment(tx, account, body, {
        now: now(),
        settleDelayMs: config.paymentSettleDelayMs,
      });
      return {
        status: payment.status === 'processing' ? 202 : 201,
        headers: { Location: `/v1/payments/${payment.id}` },
        body: payment,
      };
    });
  });

  app.openapi(getRoute, async (c) => {
    const { id } = c.req.valid('param');
    const payment = await findPayment(deps, c.get('principal').account, id);
    if (!payment) throw problem('not_found', { detail: 'No such payment.' });
    return c.json(payment, 200);
  });
}
