import { hasScope } from '@holdfast/api-keys';
import { insufficientScope } from '@holdfast/api-keys/hono';
import { paginate } from '@holdfast/cursor-pagination/postgres';
import { listQueryShape, pageSchema } from '@holdfast/cursor-pagination/zod';
import { problem } from '@holdfast/problem-details';
import { noFieldsBody } from '@holdfast/request-guards';
import { refuseFields } from '@holdfast/request-guards/hono';
import {
  createEndpoint as createWebhookEndpoint,
  deleteEndpoint as deleteWebhookEndpoint,
  endpointConcurrency,
  getEndpoint as getWebhookEndpoint,
  rotateSecret as rotateWebhookSecret,
  toEndpoint,
  updateEndpoint as updateWebhookEndpoint,
} from '@holdfast/webhook-delivery/postgres';
import { createRoute, z } from '@hono/zod-openapi';
import { json } from '../api/fields';
import { problemResponses } from '../api/problem-responses';
import {
  CreateWebhookEndpointSchema,
  endpointSort,
  idParam,
  UpdateWebhookEndpointSchema,
  WebhookEndpointSchema,
  WebhookEndpointWithSecretSchema,
} from '../api/webhook-schemas';
import type { App, Deps, Principal } from '../context';
import { EVENT_TYPES, readScopeOf } from '../event-types';

const tags = ['Webhook endpoints'];
const params = idParam('we', 'The webhook endpoint id.');

const forbiddenDestination =
  'destination_url_forbidden: the URL resolves to (or names) a loopback, private, link-local, CGNAT, multicast, unspecified or otherwise non-global address, or is not https in production.';

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
  description:
    'The signing secret is in this response only. The URL is checked now and again at every attempt (DNS resolved at request time, the connection pinned to the checked address).',
  request: { body: { required: true, content: json(CreateWebhookEndpointSchema) } },
  responses: {
    201: {
      description: 'Created; Location names it.',
      headers: z.object({ Location: z.string() }),
      content: json(WebhookEndpointWithSecretSchema),
    },
    ...problemResponses([400, 401, 403, 413, 415, 422], { 422: forbiddenDestination }),
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
  description: 'Partial update. `status` moves it between active and disabled.',
  request: { params, body: { required: true, content: json(UpdateWebhookEndpointSchema) } },
  responses: {
    200: { description: 'The updated endpoint.', content: json(WebhookEndpointSchema) },
    ...problemResponses([400, 401, 403, 404, 413, 415, 422], { 422: forbiddenDestination }),
  },
});

const deleteEndpoint = createRoute({
  method: 'delete',
  path: '/webhook-endpoints/{id}',
  tags,
  summary: 'Delete a webhook endpoint',
  description: 'No further deliveries. A repeated DELETE answers 404.',
  request: { params },
  responses: {
    204: { description: 'Deleted.' },
    ...problemResponses([400, 401, 403, 404]),
  },
});

const rotateSecret = createRoute({
  method: 'post',
  path: '/webhook-endpoints/{id}/rotate-secret',
  tags,
  summary: 'Rotate the signing secret',
  description:
    'A new secret, in this response only. For 24 hours deliveries carry a signature by the old secret too, so receivers switch without missing one.',
  request: { params, body: noFieldsBody },
  responses: {
    200: { description: 'The endpoint with its new secret.', content: json(WebhookEndpointWithSecretSchema) },
    ...problemResponses([400, 401, 403, 404, 413, 415]),
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
/**
 * 403 unless `principal` may read what `eventTypes` would push (CONTRACT section 10): a
 * subscription to `payment.succeeded` needs `payments:read`, to `*` every read scope.
 */
function requireEventScopes(principal: Principal, eventTypes: readonly string[] | undefined): void {
  for (const type of eventTypes ?? []) {
    const needed = type === '*' ? EVENT_TYPES.map(readScopeOf) : [readScopeOf(type)];
    const missing = needed.find((scope) => !hasScope(principal, scope));
    if (missing) {
      throw insufficientScope(missing, {
        detail: `Subscribing to "${type}" pushes data this API key may not read: it needs the "${missing}" scope.`,
        realm: 'holdfast',
      });
    }
  }
}

export function webhookEndpointRoutes(app: App, deps: Deps): void {
  const { sql, keyring, config } = deps;
  const destination = {
    allowPrivateDestinations: config.allowPrivateDestinations,
    production: config.production,
  };
  const missing = (id: string) => problem('not_found', { detail: `No webhook endpoint ${id}.` });

  app.openapi(listEndpoints, async (c) => {
    const { account, livemode } = c.get('principal');
    const query = c.req.valid('query');
    const page = await paginate(sql, {
      from: sql`holdfast_webhook_endpoints`,
      where: sql`account_id = ${account} and deleted_at is null`,
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
      sql,
      page.data.map((endpoint) => endpoint.id),
    );
    for (const endpoint of page.data) endpoint.concurrency = limits.get(endpoint.id) ?? endpoint.concurrency;
    return c.json(page, 200);
  });

  app.openapi(createEndpoint, async (c) => {
    const { account, livemode } = c.get('principal');
    const body = c.req.valid('json');
    requireEventScopes(c.get('principal'), body.eventTypes);
    const { endpoint, secret } = await createWebhookEndpoint(
      sql,
      {
        account,
        url: body.url,
        eventTypes: body.eventTypes,
        description: body.description,
        maxPerSecond: body.maxPerSecond,
        signatureScheme: body.signatureScheme,
      },
      { ...destination, concurrencyMax: config.delivery.perEndpoint },
    );
    c.header('Location', `/v1/webhook-endpoints/${endpoint.id}`);
    // A v1a endpoint's signing key stays with the sender: receivers need only its publicKey.
    return c.json({ ...endpoint, livemode, ...shownSecret(endpoint, secret) }, 201);
  });

  app.openapi(getEndpoint, async (c) => {
    const { account, livemode } = c.get('principal');
    const { id } = c.req.valid('param');
    const endpoint = await getWebhookEndpoint(sql, { account, id });
    if (!endpoint) throw missing(id);
    return c.json({ ...endpoint, livemode }, 200);
  });

  app.openapi(updateEndpoint, async (c) => {
    const { account, livemode } = c.get('principal');
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    requireEventScopes(c.get('principal'), body.eventTypes);
    const endpoint = await updateWebhookEndpoint(
      sql,
      {
        account,
        id,
        url: body.url,
        eventTypes: body.eventTypes,
        description: body.description,
        status: body.status,
        maxPerSecond: body.maxPerSecond,
      },
      destination,
    );
    if (!endpoint) throw missing(id);
    return c.json({ ...endpoint, livemode }, 200);
  });

  app.openapi(deleteEndpoint, async (c) => {
    const { account } = c.get('principal');
    const { id } = c.req.valid('param');
    if (!(await deleteWebhookEndpoint(sql, { account, id }))) throw missing(id);
    return c.body(null, 204);
  });

  app.openapi(rotateSecret, async (c) => {
    refuseFields(c);
    const { account, livemode } = c.get('principal');
    const { id } = c.req.valid('param');
    const rotated = await rotateWebhookSecret(sql, { account, id });
    if (!rotated) throw missing(id);
    return c.json({ ...rotated.endpoint, livemode, ...shownSecret(rotated.endpoint, rotated.secret) }, 200);
  });
}

/** The secret a creation or rotation shows: a v1 endpoint's `whsec_`, never a v1a signing key. */
function shownSecret(endpoint: { signatureScheme: 'v1' | 'v1a' }, secret: string): { secret?: string } {
  return endpoint.signatureScheme === 'v1' ? { secret } : {};
}
