import { listQueryShape, pageSchema } from '@holdfast/cursor-pagination/zod';
import { noFieldsBody } from '@holdfast/request-guards';
import { defineSortAllowlist, statusSorts } from '@holdfast/sort-allowlist';
import { createRoute, z } from '@hono/zod-openapi';
import { idParam, json, livemode, locationHeader, metadata, timestamp } from '../../api/fields';
import { problemResponses } from '../../api/problem-responses';

// Subscriptions (CONTRACT section 5): created `active` (or `past_due` when the payment method
// is a declined test card ending in 0002), changed by PATCH while not canceled, ended by
// POST /cancel (repeatable). Every change emits subscription.created or subscription.updated.

const SUBSCRIPTION_STATUSES = ['active', 'past_due', 'canceled'] as const;

export const subscriptionSort = defineSortAllowlist({
  fields: {
    createdAt: { column: 'created_at', type: 'timestamp', fineGrained: true },
    status: { column: 'status', type: 'enum', rank: SUBSCRIPTION_STATUSES },
  },
  id: { column: 'id' },
  default: '-createdAt',
  // Every order is served by an index (the baseline migration): these exactly, and any longer
  // one through its prefix up to a fine-grained key. None of the contract's sorts is refused.
  indexed: statusSorts(['createdAt']),
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

export const listRoute = createRoute({
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

export const createSubscription = createRoute({
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

export const getRoute = createRoute({
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

export const updateRoute = createRoute({
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

export const cancelRoute = createRoute({
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
