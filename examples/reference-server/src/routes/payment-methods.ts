import { isLive } from '@holdfast/api-keys';
import { paginate } from '@holdfast/cursor-pagination/postgres';
import { listQueryShape, pageSchema } from '@holdfast/cursor-pagination/zod';
import { opaqueId } from '@holdfast/opaque-id';
import { problem } from '@holdfast/problem-details';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import { createRoute, z } from '@hono/zod-openapi';
import type postgres from 'postgres';
import type { App, Deps } from '../context';
import { json, livemode, locationHeader, timestamp } from './fields';
import { problemResponses } from './webhook-openapi';
import { idParam } from './webhook-schemas';

// Payment methods (CONTRACT section 5): descriptive card details only, never a card number.
// A card whose last4 is 0002 is declined when charged (the test-card convention), so the
// failure path can be shown without a real processor.

export const paymentMethodSort = defineSortAllowlist({
  fields: { createdAt: { column: 'created_at', type: 'timestamp' } },
  id: { column: 'id' },
  default: '-createdAt',
});

const BRANDS = ['visa', 'mastercard', 'amex', 'discover', 'jcb', 'diners', 'unionpay', 'other'] as const;

const CardSchema = z
  .strictObject({
    brand: z.enum(BRANDS),
    last4: z
      .string()
      .regex(/^\d{4}$/, 'exactly four digits')
      .meta({ description: 'Last four digits; 0002 is declined when charged.', example: '4242' }),
    expMonth: z.number().int().min(1).max(12).meta({ example: 12 }),
    expYear: z.number().int().min(2000).max(2100).meta({ example: 2030 }),
  })
  .meta({ id: 'Card' });

export const PaymentMethodSchema = z
  .object({
    id: z.string().meta({ example: 'pm_2x8Kd0qLw1Yc7VnR4sT9uA' }),
    livemode,
    type: z.literal('card'),
    card: CardSchema,
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'PaymentMethod' });

export const CreatePaymentMethodSchema = z
  .strictObject({ type: z.literal('card'), card: CardSchema })
  .meta({ id: 'CreatePaymentMethod' });

const tags = ['Payment methods'];
const params = idParam('pm', 'The payment method id.');

const listRoute = createRoute({
  method: 'get',
  path: '/payment-methods',
  tags,
  summary: 'List payment methods',
  request: { query: z.strictObject(listQueryShape(paymentMethodSort)) },
  responses: {
    200: { description: 'A page of payment methods.', content: json(pageSchema(PaymentMethodSchema)) },
    ...problemResponses([400, 401, 403]),
  },
});

const createRoute_ = createRoute({
  method: 'post',
  path: '/payment-methods',
  tags,
  summary: 'Add a payment method',
  request: { body: { required: true, content: json(CreatePaymentMethodSchema) } },
  responses: {
    201: { description: 'Created.', headers: locationHeader, content: json(PaymentMethodSchema) },
    ...problemResponses([400, 401, 403, 413, 415]),
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/payment-methods/{id}',
  tags,
  summary: 'Fetch a payment method',
  request: { params },
  responses: {
    200: { description: 'The payment method.', content: json(PaymentMethodSchema) },
    ...problemResponses([400, 401, 403, 404]),
  },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/payment-methods/{id}',
  tags,
  summary: 'Remove a payment method',
  description:
    'It can no longer be charged or subscribed with; past payments keep naming it. A repeated DELETE answers 404.',
  request: { params },
  responses: {
    204: { description: 'Removed.' },
    ...problemResponses([400, 401, 403, 404]),
  },
});

/** The API representation of a `holdfast_payment_methods` row. */
export function toPaymentMethod(row: postgres.Row): z.infer<typeof PaymentMethodSchema> {
  return {
    id: row.id,
    livemode: isLive(row.account_id),
    type: 'card',
    card: row.card,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** The caller's live (not removed) payment method `id`, or `undefined`. */
export async function findPaymentMethod(
  sql: postgres.Sql | postgres.TransactionSql,
  account: string,
  id: string,
): Promise<postgres.Row | undefined> {
  const [row] = await sql`
    select * from holdfast_payment_methods where id = ${id} and account_id = ${account} and deleted_at is null`;
  return row;
}

/**
 * The payment method routes on the authenticated `/v1` app.
 *
 * @example
 * ```ts
 * paymentMethodRoutes(v1, deps);
 * ```
 */
export function paymentMethodRoutes(app: App, deps: Deps): void {
  const { sql, keyring, now } = deps;
  const notFound = () => problem('not_found', { detail: 'No such payment method.' });

  app.openapi(listRoute, async (c) => {
    const { account } = c.get('principal');
    const query = c.req.valid('query');
    const page = await paginate(sql, {
      from: sql`holdfast_payment_methods`,
      where: sql`account_id = ${account} and deleted_at is null`,
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
    const { account } = c.get('principal');
    const body = c.req.valid('json');
    const at = new Date(now());
    const [row] = await sql`
      insert into holdfast_payment_methods (id, account_id, type, card, created_at, updated_at)
      values (${opaqueId('pm')}, ${account}, 'card', ${sql.json(body.card)}, ${at}, ${at})
      returning *`;
    if (!row) throw new Error('insert returned no row');
    c.header('Location', `/v1/payment-methods/${row.id}`);
    return c.json(toPaymentMethod(row), 201);
  });

  app.openapi(getRoute, async (c) => {
    const { id } = c.req.valid('param');
    const row = await findPaymentMethod(sql, c.get('principal').account, id);
    if (!row) throw notFound();
    return c.json(toPaymentMethod(row), 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const { id } = c.req.valid('param');
    const at = new Date(now());
    const removed = await sql`
      update holdfast_payment_methods set deleted_at = ${at}, updated_at = ${at}
      where id = ${id} and account_id = ${c.get('principal').account} and deleted_at is null
      returning id`;
    if (removed.count === 0) throw notFound();
    return c.body(null, 204);
  });
}
