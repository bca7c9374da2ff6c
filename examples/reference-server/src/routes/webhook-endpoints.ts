import { paginate } from '@holdfast/cursor-pagination';
import { listQueryShape, pageSchema } from '@holdfast/cursor-pagination/zod';
import type { Db } from '@holdfast/db';
import { noFieldsBody } from '@holdfast/request-guards';
import { refuseFields } from '@holdfast/request-guards/hono';
import {
  createEndpoint as createWebhookEndpoint,
  deleteEndpoint as deleteWebhookEndpoint,
  endpointConcurrency,
  endpointScope,
  getEndpoint as getWebhookEndpoint,
  lockedEndpointCount,
  rotateSecret as rotateWebhookSecret,
  sendTestEvent,
  toEndpoint,
  updateEndpoint as updateWebhookEndpoint,
} from '@holdfast/webhook-delivery';
import { createRoute, z } from '@hono/zod-openapi';
import { json } from '../api/fields';
import { problemResponses } from '../api/problem-responses';
import {
  CreateWebhookEndpointSchema,
  DeliverySchema,
  EVENT_TYPE,
  endpointSort,
  idParam,
  UpdateWebhookEndpointSchema,
  WebhookEndpointSchema,
  WebhookEndpointWithSecretSchema,
} from '../api/webhook-schemas';
import type { App, Deps } from '../context';
import { takeEndpointQuota } from '../endpoint-quota';
import { exampleObject } from '../event-examples';
import { carriedEventTypes, requireReadable } from '../event-types';
import { problem } from '../problems';
import { authorizeEndpointAction } from './endpoint-scope';

const tags = ['Webhook endpoints'];
const params = idParam('we', 'The webhook endpoint id.');

const forbiddenDestination =
  'destination_url_forbidden: the URL resolves to (or names) a loopback, private, link-local, CGNAT, multicast, unspecified or otherwise non-global address, names a port other than 80, 443 or 1024 to 65535, or is not https in production.';

/** The scope rule of CONTRACT section 11, as the API reference states it. */
const scopesFollowData =
  'Scopes follow the data: this needs the read scope of every event type the endpoint carries (`order.*` `orders:read`, `payment.*` `payments:read`, `subscription.*` `subscriptions:read`); an absent or empty `eventTypes`, or `*`, carries every type.';
const scopeRefusal = (what: string) =>
  `forbidden (WWW-Authenticate error="insufficient_scope"): the key lacks the webhooks scope, or the read scope of an event type ${what}.`;

const listEndpoints = createRoute({
  method: 'get',
  path: '/webhook-endpoints',
  tags,
  summary: 'List webhook endpoints',
  request: { query: z.strictObject(listQueryShape(endpointSort)) },
  responses: {
    200: {
      description: 'A page of endpoints (secrets are never listed).',
      content: json(pageSchema(WebhookEndpointSchema)),
    },
    ...problemResponses([400, 401, 403]),
  },
});

export const createEndpoint = createRoute({
  method: 'post',
  path: '/webhook-endpoints',
  tags,
  summary: 'Register a webhook endpoint',
  description: `The signing secret is in this response only. The URL is checked now and again at every attempt (DNS resolved at request time, the connection pinned to the checked address). ${scopesFollowData} An account has at most ${'`HOLDFAST_MAX_ENDPOINTS`'} endpoints per mode (default 16); the next is 409 endpoint_limit_reached.`,
  request: { body: { required: true, content: json(CreateWebhookEndpointSchema) } },
  responses: {
    201: {
      description: 'Created; Location names it.',
      headers: z.object({ Location: z.string() }),
      content: json(WebhookEndpointWithSecretSchema),
    },
    ...problemResponses([400, 401, 403, 409, 413, 415, 422], {
      403: scopeRefusal('it would carry'),
      409: 'endpoint_limit_reached: the account has as many webhook endpoints in this mode as it may (HOLDFAST_MAX_ENDPOINTS, default 16); delete one first.',
      422: forbiddenDestination,
    }),
  },
});

const getEndpoint = createRoute({
  method: 'get',
  path: '/webhook-endpoints/{id}',
  tags,
  summary: 'Fetch a webhook endpoint',
  request: { params },
  responses: {
    200: { description: 'The endpoint (without its secret).', content: json(WebhookEndpointSchema) },
    ...problemResponses([400, 401, 403, 404]),
  },
});

export const updateEndpoint = createRoute({
  method: 'patch',
  path: '/webhook-endpoints/{id}',
  tags,
  summary: 'Update a webhook endpoint',
  description: `Partial update. \`status\` moves it between active and disabled. ${scopesFollowData} That holds for a change of any field (\`url\`, \`eventTypes\`, \`description\`, \`maxPerSecond\`, \`filter\`, \`ordering\`, disabling and enabling): the key needs the read scope of every event type the endpoint carries now and, for a change of \`eventTypes\`, of every type it will carry; a new \`url\` or enabling also needs the read scope of the event types of the deliveries still queued for it. A new \`ordering\` applies to deliveries created from then on.`,
  request: { params, body: { required: true, content: json(UpdateWebhookEndpointSchema) } },
  responses: {
    200: { description: 'The updated endpoint.', content: json(WebhookEndpointSchema) },
    ...problemResponses([400, 401, 403, 404, 413, 415, 422], {
      403: scopeRefusal('the endpoint would carry or has queued; nothing is changed'),
      422: forbiddenDestination,
    }),
  },
});

const deleteEndpoint = createRoute({
  method: 'delete',
  path: '/webhook-endpoints/{id}',
  tags,
  summary: 'Delete a webhook endpoint',
  description: `No further deliveries. A repeated DELETE answers 404. ${scopesFollowData} Deleting is a change like disabling: the key needs the read scope of every event type the endpoint carries.`,
  request: { params },
  responses: {
    204: { description: 'Deleted.' },
    ...problemResponses([400, 401, 403, 404], {
      403: scopeRefusal('the endpoint carries; nothing is deleted'),
    }),
  },
});

const rotateSecret = createRoute({
  method: 'post',
  path: '/webhook-endpoints/{id}/rotate-secret',
  tags,
  summary: 'Rotate the signing secret',
  description: `A new secret, in this response only. For 24 hours deliveries carry a signature by the old secret too, so receivers switch without missing one. ${scopesFollowData}`,
  request: { params, body: noFieldsBody },
  responses: {
    200: { description: 'The endpoint with its new secret.', content: json(WebhookEndpointWithSecretSchema) },
    ...problemResponses([400, 401, 403, 404, 413, 415], {
      403: scopeRefusal('the endpoint carries; the secret is not rotated'),
    }),
  },
});

const TestEventSchema = z
  .strictObject({
    eventType: EVENT_TYPE.meta({ description: 'The type to send: one the endpoint carries.' }),
  })
  .meta({ id: 'SendTestEvent' });

const sendTest = createRoute({
  method: 'post',
  path: '/webhook-endpoints/{id}/test',
  tags,
  summary: 'Send a test event',
  description: `Enqueues one event of \`eventType\` whose \`data.object\` is the documented example of that type (the example of its payload under \`webhooks\`), marked \`"test": true\` at the top level, with \`sequence\` 0 (no resource's sequence moves). It is delivered to this endpoint only (never fanned out to others; the endpoint's \`filter\` does not apply: you chose the endpoint), signed, retried and logged like any other delivery. Answers 202 with the delivery; follow it at Location (\`GET /v1/deliveries/{id}\` and its \`/attempts\`). ${scopesFollowData} A type the endpoint does not carry is 422 unprocessable; a disabled endpoint is 409 invalid_state_transition (enable it first: nothing is queued). Idempotency-Key is not taken here (as on the other webhook-endpoint actions): a repeat sends another test event. At most \`HOLDFAST_TEST_EVENT_QUOTA\` test events per endpoint and window (default 10 a minute); the next is 429 rate_limited with Retry-After, and nothing is queued.`,
  request: { params, body: { required: true, content: json(TestEventSchema) } },
  responses: {
    202: {
      description: 'Queued: the delivery of the test event; Location names it.',
      headers: z.object({ Location: z.string() }),
      content: json(DeliverySchema),
    },
    ...problemResponses([400, 401, 403, 404, 409, 413, 415, 422], {
      403: scopeRefusal('the endpoint carries; nothing is sent'),
      409: 'invalid_state_transition: the endpoint is disabled; enable it (PATCH status active) and send again. Nothing is queued.',
      422: 'unprocessable: the endpoint does not carry this event type (see its eventTypes); nothing is queued.',
      429: "rate_limited: the API key's rate limit, or this endpoint's test events for the window (HOLDFAST_TEST_EVENT_QUOTA, default 10 a minute) are spent; Retry-After says when to send again. Nothing is queued.",
    }),
  },
});

/**
 * `/v1/webhook-endpoints`: registration (SSRF-checked, the secret shown once), changes,
 * deletion and secret rotation, all through `@holdfast/webhook-delivery`.
 *
 * @example
 * ```ts
 * webhookEndpointRoutes(v1, deps);
 * ```
 */
export function webhookEndpointRoutes(app: App, deps: Deps): void {
  const { db, transaction, keyring, config } = deps;
  const destination = {
    allowPrivateDestinations: config.allowPrivateDestinations,
    ...(deps.privateUrlPrefixes ? { privateUrlPrefixes: deps.privateUrlPrefixes } : {}),
    production: config.production,
  };
  const missing = (id: string) => problem('not_found', { detail: `No webhook endpoint ${id}.` });

  app.openapi(listEndpoints, async (c) => {
    const { account, livemode } = c.get('principal');
    const query = c.req.valid('query');
    const page = await paginate(db, {
      from: 'holdfast_webhook_endpoints',
      where: { text: 'account_id = $1 and deleted_at is null', values: [account] },
      allowlist: endpointSort,
      sort: query.sort,
      cursor: query.cursor,
      limit: query.limit,
      include: query.include,
      binding: { account, resource: 'webhook_endpoints' },
      keyring,
      map: (row) => ({ ...toEndpoint(row), livemode }),
    });
    // The adaptive limits live in the workers' pacing rows: one lookup for the page.
    const limits = await endpointConcurrency(
      db,
      page.data.map((endpoint) => endpoint.id),
    );
    for (const endpoint of page.data) endpoint.concurrency = limits.get(endpoint.id) ?? endpoint.concurrency;
    return c.json(page, 200);
  });

  app.openapi(createEndpoint, async (c) => {
    const principal = c.get('principal');
    const { account, livemode } = principal;
    const body = c.req.valid('json');
    requireReadable(principal, carriedEventTypes(body.eventTypes), 'Creating this endpoint');
    const { endpoint, secret } = await transaction(async (_tx, tx) => {
      // One creation at a time per tenant (account and mode): the count and the insert see the
      // same rows, so parallel creations at the limit cannot all pass a check made beforehand.
      if ((await lockedEndpointCount(tx, account)) >= config.maxEndpoints) {
        throw problem('endpoint_limit_reached', {
          detail: `This account has ${config.maxEndpoints} webhook endpoints in ${livemode ? 'live' : 'test'} mode, the most it may have. Delete one before registering another.`,
        });
      }
      return createWebhookEndpoint(
        tx,
        {
          account,
          url: body.url,
          eventTypes: body.eventTypes,
          description: body.description,
          maxPerSecond: body.maxPerSecond,
          signatureScheme: body.signatureScheme,
          filter: body.filter,
          ordering: body.ordering,
        },
        { ...destination, concurrencyMax: config.delivery.perEndpoint },
      );
    });
    c.header('Location', `/v1/webhook-endpoints/${endpoint.id}`);
    // A v1a endpoint's signing key stays with the sender: receivers need only its publicKey.
    return c.json({ ...endpoint, livemode, ...shownSecret(endpoint, secret) }, 201);
  });

  app.openapi(getEndpoint, async (c) => {
    const { account, livemode } = c.get('principal');
    const { id } = c.req.valid('param');
    const endpoint = await getWebhookEndpoint(db, { account, id });
    if (!endpoint) throw missing(id);
    return c.json({ ...endpoint, livemode }, 200);
  });

  app.openapi(updateEndpoint, async (c) => {
    const principal = c.get('principal');
    const { account, livemode } = principal;
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    const update = (tx: Db) =>
      updateWebhookEndpoint(
        tx,
        {
          account,
          id,
          url: body.url,
          eventTypes: body.eventTypes,
          description: body.description,
          status: body.status,
          maxPerSecond: body.maxPerSecond,
          filter: body.filter,
          ordering: body.ordering,
        },
        destination,
      );
    // Any change, of any field (a filter, the ordering, the rate, disabling), needs the read scope
    // of every event type the endpoint carries (CONTRACT section 12), and of the types it will
    // carry; a new url or enabling also of what is queued for it. Checked under the row's lock.
    const redirects = body.url !== undefined || body.status === 'active';
    const endpoint = await transaction(async (_tx, tx) => {
      const found = await authorizeEndpointAction(tx, principal, {
        id,
        eventTypes: body.eventTypes,
        queued: redirects,
        lock: 'update',
        action: 'Changing this endpoint',
      });
      return found ? update(tx) : undefined;
    });
    if (!endpoint) throw missing(id);
    return c.json({ ...endpoint, livemode }, 200);
  });

  app.openapi(deleteEndpoint, async (c) => {
    const principal = c.get('principal');
    const { id } = c.req.valid('param');
    // Deleting is a change too (CONTRACT section 12): it stops the data of every type the
    // endpoint carries, so it needs the read scope of each, as disabling does.
    const deleted = await transaction(
      async (_tx, tx) =>
        (await authorizeEndpointAction(tx, principal, {
          id,
          lock: 'update',
          action: 'Deleting this endpoint',
        })) && deleteWebhookEndpoint(tx, { account: principal.account, id }),
    );
    if (!deleted) throw missing(id);
    return c.body(null, 204);
  });

  app.openapi(rotateSecret, async (c) => {
    refuseFields(c);
    const principal = c.get('principal');
    const { account, livemode } = principal;
    const { id } = c.req.valid('param');
    const rotated = await transaction(async (_tx, tx) =>
      (await authorizeEndpointAction(tx, principal, {
        id,
        lock: 'update',
        action: 'Rotating the secret of this endpoint',
      }))
        ? rotateWebhookSecret(tx, { account, id })
        : undefined,
    );
    if (!rotated) throw missing(id);
    return c.json({ ...rotated.endpoint, livemode, ...shownSecret(rotated.endpoint, rotated.secret) }, 200);
  });

  app.openapi(sendTest, async (c) => {
    const principal = c.get('principal');
    const { account, livemode } = principal;
    const { id } = c.req.valid('param');
    const { eventType } = c.req.valid('json');
    const sent = await transaction(async (_tx, tx) => {
      // Under a share lock: the event types and status read here hold until the delivery is written.
      const found = await authorizeEndpointAction(tx, principal, {
        id,
        lock: 'share',
        action: 'Sending a test event to this endpoint',
      });
      if (!found) return undefined;
      const row = await endpointScope(tx, { account, id }, 'share');
      if (!row) return undefined;
      requireReadable(principal, [eventType], 'Sending a test event of this type');
      if (!carriedEventTypes(row.eventTypes).includes(eventType)) {
        throw problem('unprocessable', {
          detail: `The endpoint does not carry ${eventType} (it carries ${carriedEventTypes(row.eventTypes).join(', ')}).`,
          errors: [
            {
              field: 'eventType',
              code: 'not_carried',
              pointer: '#/eventType',
              detail: 'an event type the endpoint carries',
            },
          ],
        });
      }
      if (row.status !== 'active') {
        throw problem('invalid_state_transition', {
          detail: 'The endpoint is disabled: enable it (PATCH status active) before sending it a test event.',
        });
      }
      await takeEndpointQuota(tx, {
        endpointId: id,
        action: 'test',
        quota: config.endpointQuotas.testEvents,
        now: deps.now(),
      });
      return sendTestEvent(
        tx,
        { account, endpointId: id, type: eventType, object: exampleObject(eventType, livemode) },
        { now: deps.now },
      );
    });
    if (!sent) throw missing(id);
    c.header('Location', `/v1/deliveries/${sent.delivery.id}`);
    return c.json({ ...sent.delivery, eventType, livemode }, 202);
  });
}

/** The secret a creation or rotation shows: a v1 endpoint's `whsec_`, never a v1a signing key. */
function shownSecret(endpoint: { signatureScheme: 'v1' | 'v1a' }, secret: string): { secret?: string } {
  return endpoint.signatureScheme === 'v1' ? { secret } : {};
}
