import { isLive } from '@holdfast/api-keys';
import { paginate } from '@holdfast/cursor-pagination/postgres';
import { listQueryShape, pageSchema } from '@holdfast/cursor-pagination/zod';
import { noFieldsBody } from '@holdfast/json-body';
import { refuseFields } from '@holdfast/json-body/hono';
import { opaqueId } from '@holdfast/opaque-id';
import { problem } from '@holdfast/problem-details';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import { createRoute, z } from '@hono/zod-openapi';
import type postgres from 'postgres';
import type { App, Deps } from '../context';
import { emit } from '../outbox';
import { findPaymentMethod } from '../resources/payment-methods/repository';
import { json, livemode, locationHeader, metadata, timestamp } from './fields';
import { problemResponses } from './webhook-openapi';
import { idParam } from './webhook-schemas';

// Subscriptions (CONTRACT section 5): created `active` (or `past_due` when the payment method
// is a declined test card ending in 0002), changed by PATCH while not canceled, ended by
// POST /cancel (repeatable). Every change emits subscription.created or subscription.updated.

export const SUBSCRIPTION_STATUSES = ['active', 'past_due', 'canceled'] as const;

export const subscriptionSort = defineSortAllowlist({
  fields: {
    createdAt: { column: 'created_at', type: 'timestamp' },
    status: { column: 'status', type: 'enum', rank: SUBSCRIPTION_STATUSES },
  },
  id: { column: 'id' },
  default: '-createdAt',
});

const plan = z.string().min(1).max(64).meta({ description: 'The plan name.', example: 'pro-monthly' });
const quantity = z.number().int().min(1).max(1_000_000).meta({ description: 'Seats or units, from 1.' });

export const SubscriptionSchema = z
  .object({
    id: z.string().meta({ example: 'sub_2x8Kd0qLw1Yc7VnR4sT9uA' }),
    livemode,
    status: z.enum(SUBSCRIPTION_STATUSES),
    paymentMethod: z.string(),
    plan,
    quantity,
    metadata,
    canceledAt: timestamp.nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Subscription' });

export const CreateSubscriptionSchema = z
  .strictObject({
    paymentMethod: z.string().min(1).max(255).meta({ description: 'A payment method id of this account.' }),
    plan,
    quantity: quantity.optional().meta({ description: 'Default 1.' }),
    metadata: metadata.optional(),
  })
  .meta({ id: 'CreateSubscription' });

export const UpdateSubscriptionSchema = z
  .strictObject({ plan: plan.optional(), quantity: quantity.optional(), metadata: metadata.optional() })
  .meta({ id: 'UpdateSubscription' });

const tags = ['Subscriptions'];
const params = idParam('sub', 'The subscription id.');

const listRoute = createRoute({
  method: 'get',
  path: '/subscriptions',
  tags,
  summary: 'List subscriptions',
  request: { query: z.strictObject(listQueryShape(subscriptionSort)) },
  responses: {
    200: { description: 'A page of subscriptions.', content: json(pageSchema(SubscriptionSchema)) },
    ...problemResponses([400, 401, 403]),
  },
});

const createSubscription = createRoute({
  method: 'post',
  path: '/subscriptions',
  tags,
  summary: 'Create a subscription',
  description: 'Emits subscription.created.',
  request: { body: { required: true, content: json(CreateSubscriptionSchema) } },
  responses: {
    201: { description: 'Created.', headers: locationHeader, content: json(SubscriptionSchema) },
    ...problemResponses([400, 401, 403, 413, 415, 422], {
      422: 'unprocessable: no such payment method on this account.',
    }),
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/subscriptions/{id}',
  tags,
  summary: 'Fetch a subscription',
  request: { params },
  responses: {
    200: { description: 'The subscription.', content: json(SubscriptionSchema) },
    ...problemResponses([400, 401, 403, 404]),
  },
});

const updateRoute = createRoute({
  method: 'patch',
  path: '/subscriptions/{id}',
  tags,
  summary: 'Update a subscription',
  description: 'Partial update; emits subscription.updated. A canceled subscription cannot change (409).',
  request: { params, body: { required: true, content: json(UpdateSubscriptionSchema) } },
  responses: {
    200: { description: 'The updated subscription.', content: json(SubscriptionSchema) },
    ...problemResponses([400, 401, 403, 404, 409, 413, 415], {
      409: 'invalid_state_transition: the subscription is canceled.',
    }),
  },
});

const cancelRoute = createRoute({
  method: 'post',
  path: '/subscriptions/{id}/cancel',
  tags,
  summary: 'Cancel a subscription',
  description: 'Emits subscription.updated. Cancelling a canceled subscription returns it unchanged.',
  request: { params, body: noFieldsBody },
  responses: {
    200: { description: 'The canceled subscription.', content: json(SubscriptionSchema) },
    ...problemResponses([400, 401, 403, 404, 413, 415]),
  },
});

/** The API representation of a `holdfast_subscriptions` row. */
export function toSubscription(row: postgres.Row): z.infer<typeof SubscriptionSchema> {
  return {
    id: row.id,
    livemode: isLive(row.account_id),
    status: row.status,
    paymentMethod: row.payment_method_id,
    plan: row.plan,
    quantity: row.quantity,
    metadata: row.metadata,
    canceledAt: row.canceled_at === null ? null : row.canceled_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/**
 * The subscription routes on the authenticated `/v1` app.
 *
 * @example
 * ```ts
 * subscriptionRoutes(v1, deps);
 * ```
 */
export function subscriptionRoutes(app: App, deps: Deps): void {
  const { sql, keyring, now } = deps;
  const notFound = () => problem('not_found', { detail: 'No such subscription.' });
  const lock = async (tx: postgres.TransactionSql, account: string, id: string) => {
    const [row] = await tx`
      select * from holdfast_subscriptions where id = ${id} and account_id = ${account} for update`;
    if (!row) throw notFound();
    return row;
  };

  app.openapi(listRoute, async (c) => {
    const { account } = c.get('principal');
    const query = c.req.valid('query');
    const page = await paginate(sql, {
      from: sql`holdfast_subscriptions`,
      where: sql`account_id = ${account}`,
      allowlist: subscriptionSort,
      sort: query.sort,
      cursor: query.cursor,
      limit: query.limit,
      include: query.include,
      binding: { account, resource: 'subscriptions' },
      keyring,
      map: toSubscription,
    });
    return c.json(page, 200);
  });

  app.openapi(createSubscription, async (c) => {
    const { account } = c.get('principal');
    const body = c.req.valid('json');
    const subscription = await sql.begin(async (tx) => {
      const method = await findPaymentMethod(tx, account, body.paymentMethod);
      if (!method) {
        const detail = 'No such payment method on this account.';
        throw problem('unprocessable', {
          detail,
          errors: [{ field: 'paymentMethod', code: 'unprocessable', pointer: '#/paymentMethod', detail }],
        });
      }
      const at = new Date(now());
      const [row] = await tx`
        insert into holdfast_subscriptions (id, account_id, status, payment_method_id, plan, quantity, metadata,
          created_at, updated_at)
        values (${opaqueId('sub')}, ${account}, ${method.card?.last4 === '0002' ? 'past_due' : 'active'},
          ${body.paymentMethod}, ${body.plan}, ${body.quantity ?? 1}, ${tx.json(body.metadata ?? {})}, ${at}, ${at})
        returning *`;
      if (!row) throw new Error('insert returned no row');
      const result = toSubscription(row);
      await emit(tx, {
        account,
        type: 'subscription.created',
        resourceId: result.id,
        object: result,
        now: at.getTime(),
      });
      return result;
    });
    c.header('Location', `/v1/subscriptions/${subscription.id}`);
    return c.json(subscription, 201);
  });

  app.openapi(getRoute, async (c) => {
    const { id } = c.req.valid('param');
    const [row] = await sql`
      select * from holdfast_subscriptions where id = ${id} and account_id = ${c.get('principal').account}`;
    if (!row) throw notFound();
    return c.json(toSubscription(row), 200);
  });

  app.openapi(updateRoute, async (c) => {
    const { account } = c.get('principal');
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    const subscription = await sql.begin(async (tx) => {
      const current = await lock(tx, account, id);
      if (current.status === 'canceled') {
        throw problem('invalid_state_transition', { detail: 'A canceled subscription cannot be changed.' });
      }
      const at = new Date(now());
      const [row] = await tx`
        update holdfast_subscriptions set
          plan = ${body.plan ?? current.plan},
          quantity = ${body.quantity ?? current.quantity},
          metadata = ${tx.json(body.metadata ?? current.metadata)},
          updated_at = ${at}
        where id = ${id} returning *`;
      if (!row) throw notFound();
      const result = toSubscription(row);
      await emit(tx, {
        account,
        type: 'subscription.updated',
        resourceId: id,
        object: result,
        now: at.getTime(),
      });
      return result;
    });
    return c.json(subscription, 200);
  });

  app.openapi(cancelRoute, async (c) => {
    refuseFields(c);
    const { account } = c.get('principal');
    const { id } = c.req.valid('param');
    const subscription = await sql.begin(async (tx) => {
      const current = await lock(tx, account, id);
      if (current.status === 'canceled') return toSubscription(current);
      const at = new Date(now());
      const [row] = await tx`
        update holdfast_subscriptions set status = 'canceled', canceled_at = ${at}, updated_at = ${at}
        where id = ${id} returning *`;
      if (!row) throw notFound();
      const result = toSubscription(row);
      await emit(tx, {
        account,
        type: 'subscription.updated',
        resourceId: id,
        object: result,
        now: at.getTime(),
      });
      return result;
    });
    return c.json(subscription, 200);
  });
}
