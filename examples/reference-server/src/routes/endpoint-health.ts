import { problem } from '@holdfast/problem-details';
import { endpointStats, recoverDeliveries } from '@holdfast/webhook-delivery';
import { createRoute, z } from '@hono/zod-openapi';
import { json, timestamp } from '../api/fields';
import { problemResponses } from '../api/problem-responses';
import { idParam } from '../api/webhook-schemas';
import type { App, Deps } from '../context';
import { takeEndpointQuota } from '../endpoint-quota';
import { readableEventTypes } from '../event-types';
import { authorizeEndpointAction } from './endpoint-scope';

// CONTRACT section 10, "Recovery" and "Endpoint health": bulk recovery of an endpoint's dead and
// failed deliveries, and its attempts by hour or day for the dashboard's health chart.

const tags = ['Webhook endpoints'];
const params = idParam('we', 'The webhook endpoint id.');

const RecoverSchema = z
  .strictObject({
    since: timestamp.meta({ description: 'Deliveries created at or after this instant.' }),
    until: timestamp
      .optional()
      .meta({ description: 'Deliveries created before this instant (default: now).' }),
  })
  .meta({ id: 'RecoverDeliveries' });

const RecoveredSchema = z
  .object({ recovered: z.number().int().min(0).meta({ description: 'How many deliveries were re-queued.' }) })
  .meta({ id: 'RecoveredDeliveries' });

const StatsBucketSchema = z
  .object({
    start: timestamp,
    end: timestamp,
    succeeded: z.number().int().meta({ description: 'Attempts answered 2xx.' }),
    failed: z.number().int().meta({ description: 'Failed attempts that were (or will be) retried.' }),
    dead: z.number().int().meta({ description: 'Failed attempts that were the last of their delivery.' }),
    p50LatencyMs: z.number().int().nullable(),
    p95LatencyMs: z.number().int().nullable(),
  })
  .meta({ id: 'EndpointStatsBucket' });

const StatsSchema = z
  .object({
    endpoint: z.string(),
    window: z.enum(['24h', '7d']),
    bucketSize: z.enum(['hour', 'day']),
    from: timestamp,
    to: timestamp,
    buckets: z.array(StatsBucketSchema),
  })
  .meta({ id: 'EndpointStats' });

const recoverEndpoint = createRoute({
  method: 'post',
  path: '/webhook-endpoints/{id}/recover',
  tags,
  summary: 'Recover failed and dead deliveries',
  description:
    'Re-queues every `dead` or `failed` delivery of this endpoint created in [since, until): due now, fresh retry schedule, same Webhook-Id. A disabled endpoint gets them once it is enabled again. Location is the endpoint; follow the deliveries with `GET /v1/deliveries?endpoint={id}`. Scopes follow the data: this needs the read scope of every event type the endpoint carries (`order.*` `orders:read`, `payment.*` `payments:read`, `subscription.*` `subscriptions:read`; an absent or empty `eventTypes`, or `*`, carries every type), else 403; only deliveries of events the key may read are re-queued and counted. A delivery whose attempt is running is left to it (not re-queued, not counted). One call re-queues at most `HOLDFAST_RECOVER_MAX` deliveries (default 1000), the oldest first: call again for the rest. At most `HOLDFAST_RECOVER_QUOTA` recoveries per endpoint and window (default 5 an hour); the next is 429 rate_limited with Retry-After, and nothing is re-queued.',
  request: { params, body: { required: true, content: json(RecoverSchema) } },
  responses: {
    202: {
      description: 'Queued: how many deliveries were re-queued.',
      headers: z.object({ Location: z.string() }),
      content: json(RecoveredSchema),
    },
    ...problemResponses([400, 401, 403, 404, 413, 415], {
      403: 'forbidden (WWW-Authenticate error="insufficient_scope"): the key lacks webhooks:write, or the read scope of an event type the endpoint carries; nothing is re-queued.',
      429: "rate_limited: the API key's rate limit, or this endpoint's recoveries for the window (HOLDFAST_RECOVER_QUOTA, default 5 an hour) are spent; Retry-After says when to call again. Nothing is re-queued.",
    }),
  },
});

const endpointHealth = createRoute({
  method: 'get',
  path: '/webhook-endpoints/{id}/stats',
  tags,
  summary: 'Endpoint health',
  description:
    'Attempts per hour over the last 24 hours (`window=24h`, the default) or per UTC day over the last 7 days (`window=7d`), by outcome, with p50/p95 latency per bucket. Oldest bucket first; the last holds now. Only attempts of deliveries of events this key may read are counted (as for `/v1/deliveries`).',
  request: {
    params,
    query: z.strictObject({
      window: z
        .enum(['24h', '7d'])
        .default('24h')
        .meta({ description: 'The period: 24h (hourly buckets) or 7d (daily).' }),
    }),
  },
  responses: {
    200: { description: 'The buckets.', content: json(StatsSchema) },
    ...problemResponses([400, 401, 403, 404]),
  },
});

const missing = (id: string) =>
  problem('not_found', { detail: `No webhook endpoint ${id} on this account.` });

/**
 * `POST /v1/webhook-endpoints/{id}/recover` and `GET /v1/webhook-endpoints/{id}/stats`: wiring
 * over `recoverDeliveries` and `endpointStats` of `@holdfast/webhook-delivery`.
 *
 * @example
 * ```ts
 * endpointHealthRoutes(v1, deps);
 * ```
 */
export function endpointHealthRoutes(app: App, deps: Deps): void {
  const { db, transaction } = deps;
  app.openapi(recoverEndpoint, async (c) => {
    const principal = c.get('principal');
    const { account } = principal;
    const { id } = c.req.valid('param');
    const { since, until } = c.req.valid('json');
    const now = deps.now();
    const from = Date.parse(since);
    const to = until === undefined ? now : Date.parse(until);
    if (to < from) {
      throw problem('validation_failed', {
        detail: '`until` is before `since`.',
        errors: [
          {
            field: 'until',
            code: 'before_since',
            pointer: '#/until',
            detail: 'Give an instant after `since`.',
          },
        ],
      });
    }
    const { recover: quota, recoverMax } = deps.config.endpointQuotas;
    const recovered = await transaction(async (_tx, tx) => {
      const found = await authorizeEndpointAction(tx, principal, {
        id,
        lock: 'share',
        action: 'Recovering the deliveries of this endpoint',
      });
      if (!found) return undefined;
      await takeEndpointQuota(tx, { endpointId: id, action: 'recover', quota, now });
      return recoverDeliveries(
        tx,
        {
          account,
          endpointId: id,
          since: from,
          until: to,
          // Deliveries of types the endpoint no longer carries stay put unless the key reads them.
          eventTypes: readableEventTypes(principal),
          max: recoverMax,
        },
        { now: () => now },
      );
    });
    if (recovered === undefined) throw missing(id);
    c.header('Location', `/v1/webhook-endpoints/${id}`);
    return c.json({ recovered }, 202);
  });
  app.openapi(endpointHealth, async (c) => {
    const principal = c.get('principal');
    const { account } = principal;
    const { id } = c.req.valid('param');
    const { window } = c.req.valid('query');
    const stats = await endpointStats(
      db,
      {
        account,
        endpointId: id,
        window,
        eventTypes: readableEventTypes(principal),
      },
      { now: deps.now },
    );
    if (!stats) throw missing(id);
    return c.json({ endpoint: id, ...stats }, 200);
  });
}
