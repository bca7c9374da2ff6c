import { problem } from '@holdfast/problem-details';
import { endpointStats, recoverDeliveries } from '@holdfast/webhook-delivery';
import { createRoute, z } from '@hono/zod-openapi';
import type { ManagementApp } from './app-types';
import { limitDefault, limitInline, limitParens, quotaWindow, scopeList } from './docs';
import { authorizeEndpointAction } from './endpoint-scope';
import type { Management } from './options';
import { problemResponses } from './problem-responses';
import { takeEndpointQuota } from './quota';
import { idParam, json, timestamp } from './schemas';

// Bulk recovery of an endpoint's dead and failed deliveries, and its attempts by hour or day for
// the portal's health chart.

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

/** The routes of recovery and health, described for `m`'s event types and limits. */
function healthRouteDefinitions(m: Management) {
  const recoverEndpoint = createRoute({
    method: 'post',
    path: '/webhook-endpoints/{id}/recover',
    tags,
    summary: 'Recover failed and dead deliveries',
    description: `Re-queues every \`dead\` or \`failed\` delivery of this endpoint created in [since, until): due now, fresh retry schedule, same Webhook-Id. A disabled endpoint gets them once it is enabled again. Location is the endpoint; follow the deliveries with \`GET ${m.basePath}/deliveries?endpoint={id}\`. Scopes follow the data: this needs the read scope of every event type the endpoint carries (${scopeList(m)}; an absent or empty \`eventTypes\`, or \`*\`, carries every type), else 403; only deliveries of events the key may read are re-queued and counted. A delivery whose attempt is running is left to it (not re-queued, not counted). One call re-queues at most ${limitInline(m, 'recoverMax')} deliveries${limitDefault(m, 'recoverMax')}, the oldest first: call again for the rest. At most ${limitInline(m, 'recover')} recoveries per endpoint and window${quotaWindow(m, 'recover')}; the next is 429 rate_limited with Retry-After, and nothing is re-queued.`,
    request: { params, body: { required: true, content: json(RecoverSchema) } },
    responses: {
      202: {
        description: 'Queued: how many deliveries were re-queued.',
        headers: z.object({ Location: z.string() }),
        content: json(RecoveredSchema),
      },
      ...problemResponses([400, 401, 403, 404, 413, 415], {
        403: 'forbidden (WWW-Authenticate error="insufficient_scope"): the key lacks webhooks:write, or the read scope of an event type the endpoint carries; nothing is re-queued.',
        429: `rate_limited: the API key's rate limit, or this endpoint's recoveries for the window ${limitParens(m, 'recover')} are spent; Retry-After says when to call again. Nothing is re-queued.`,
      }),
    },
  });

  const endpointHealth = createRoute({
    method: 'get',
    path: '/webhook-endpoints/{id}/stats',
    tags,
    summary: 'Endpoint health',
    description: `Attempts per hour over the last 24 hours (\`window=24h\`, the default) or per UTC day over the last 7 days (\`window=7d\`), by outcome, with p50/p95 latency per bucket. Oldest bucket first; the last holds now. Only attempts of deliveries of events this key may read are counted (as for \`${m.basePath}/deliveries\`).`,
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

  return { recoverEndpoint, endpointHealth };
}

const missing = (id: string) =>
  problem('not_found', { detail: `No webhook endpoint ${id} on this account.` });

/**
 * `POST /webhook-endpoints/{id}/recover` and `GET /webhook-endpoints/{id}/stats`: wiring over
 * `recoverDeliveries` and `endpointStats` of `@holdfast/webhook-delivery`.
 */
export function healthRoutes(app: ManagementApp, m: Management): void {
  const { db, transaction, rules } = m;
  const { recoverEndpoint, endpointHealth } = healthRouteDefinitions(m);
  app.openapi(recoverEndpoint, async (c) => {
    const principal = c.get('portalCaller');
    const { account } = principal;
    const { id } = c.req.valid('param');
    const { since, until } = c.req.valid('json');
    const now = m.now();
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
    const { recover: quota, recoverMax } = m;
    const recovered = await transaction(async (_tx, tx) => {
      const found = await authorizeEndpointAction(tx, m, principal, {
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
          eventTypes: rules.readable(principal),
          max: recoverMax,
        },
        { now: () => now },
      );
    });
    if (recovered === undefined) throw missing(id);
    c.header('Location', `${m.basePath}/webhook-endpoints/${id}`);
    return c.json({ recovered }, 202);
  });
  app.openapi(endpointHealth, async (c) => {
    const principal = c.get('portalCaller');
    const { account } = principal;
    const { id } = c.req.valid('param');
    const { window } = c.req.valid('query');
    const stats = await endpointStats(
      db,
      {
        account,
        endpointId: id,
        window,
        eventTypes: rules.readable(principal),
      },
      { now: m.now },
    );
    if (!stats) throw missing(id);
    return c.json({ endpoint: id, ...stats }, 200);
  });
}
