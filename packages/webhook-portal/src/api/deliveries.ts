import { paginate } from '@holdfast/cursor-pagination';
import { listQueryShape, pageSchema } from '@holdfast/cursor-pagination/zod';
import { withStatementTimeout } from '@holdfast/db';
import { noFieldsBody } from '@holdfast/request-guards';
import { refuseFields } from '@holdfast/request-guards/hono';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import {
  getDelivery as getStoredDelivery,
  replayDelivery as replayStoredDelivery,
  toAttempt,
  toDelivery,
} from '@holdfast/webhook-delivery';
import { createRoute, z } from '@hono/zod-openapi';
import type { ManagementApp } from './app-types';
import { scopeList } from './docs';
import { authorizeEndpointAction } from './endpoint-scope';
import type { Management } from './options';
import { problemResponses } from './problem-responses';
import { problem } from './problems';
import { AttemptSchema, DELIVERY_STATUSES, deliverySort, idParam, json } from './schemas';

const tags = ['Deliveries'];
const params = idParam('dlv', 'The delivery id.');

const attemptSort = defineSortAllowlist({
  fields: { createdAt: { column: 'created_at', type: 'timestamp' } },
  id: { column: 'id' },
  default: '-createdAt',
});

/** The routes of deliveries, described for `m`'s event types. */
function deliveryRouteDefinitions(m: Management) {
  const { Delivery: DeliverySchema, EventType: EVENT_TYPE } = m.schemas;
  // Scopes follow the data, as the API reference states it for every delivery operation.
  const visibility = `Only deliveries of events this key may read are shown (${scopeList(m, true)}${m.docs.eventsPath ? `, as for \`${m.docs.eventsPath}\`` : ''}); any other is absent from lists and counts, and 404 by id.`;
  const listDeliveries = createRoute({
    method: 'get',
    path: '/deliveries',
    tags,
    summary: 'List deliveries',
    description: `One delivery per (event, endpoint). \`status=dead\` is the dead-letter view. Filters are bound into the cursor. ${visibility}`,
    request: {
      query: z.strictObject({
        ...listQueryShape(deliverySort),
        status: z
          .enum(DELIVERY_STATUSES)
          .optional()
          .meta({ description: 'Only deliveries in this status; dead is the dead-letter view.' }),
        endpoint: z
          .string()
          .min(1)
          .max(255)
          .optional()
          .meta({ description: 'Only deliveries to this webhook endpoint id.' }),
        eventType: EVENT_TYPE.optional().meta({ description: 'Only deliveries of this event type.' }),
      }),
    },
    responses: {
      200: { description: 'A page of deliveries.', content: json(pageSchema(DeliverySchema)) },
      ...problemResponses([400, 401, 403]),
    },
  });

  const getDelivery = createRoute({
    method: 'get',
    path: '/deliveries/{id}',
    tags,
    summary: 'Fetch a delivery',
    description: visibility,
    request: { params },
    responses: {
      200: { description: 'The delivery.', content: json(DeliverySchema) },
      ...problemResponses([400, 401, 403, 404]),
    },
  });

  const listAttempts = createRoute({
    method: 'get',
    path: '/deliveries/{id}/attempts',
    tags,
    summary: 'The attempt log of a delivery',
    description: `Every attempt: HTTP status or error, latency, the first 1 KiB of the response body, time. ${visibility}`,
    request: { params, query: z.strictObject(listQueryShape(attemptSort)) },
    responses: {
      200: { description: 'A page of attempts.', content: json(pageSchema(AttemptSchema)) },
      ...problemResponses([400, 401, 403, 404]),
    },
  });

  const replayProblems = problemResponses([400, 401, 403, 404, 409, 413, 415], {
    403: 'forbidden (WWW-Authenticate error="insufficient_scope"): the key lacks webhooks:write, or the read scope of an event type the delivery\'s endpoint carries.',
    409: 'delivery_in_flight: an attempt of this delivery is running; nothing is queued. Retry-After says when to replay it (the attempt has ended by then).',
  });

  const replayDelivery = createRoute({
    method: 'post',
    path: '/deliveries/{id}/replay',
    tags,
    summary: 'Replay a delivery',
    description: `Re-queues the same delivery for an attempt now with a fresh retry schedule: same Webhook-Id, signed afresh. Answers 202 with the delivery; its URL is the status to poll. A delivery whose attempt is running is not replayed (nothing is sent twice at once): 409 \`delivery_in_flight\` with \`Retry-After\`, the seconds until that attempt has ended at the latest; replay it then. ${visibility} Scopes follow the data: replaying also needs the read scope of every event type its endpoint carries (an absent or empty \`eventTypes\`, or \`*\`, carries every type), else 403.`,
    request: { params, body: noFieldsBody },
    responses: {
      202: {
        description: 'Queued; Location is the delivery to poll.',
        headers: z.object({ Location: z.string() }),
        content: json(DeliverySchema),
      },
      ...replayProblems,
      409: {
        ...replayProblems[409],
        headers: z.object({
          'Retry-After': z
            .number()
            .int()
            .min(1)
            .max(10)
            .meta({ description: 'Seconds until the running attempt has ended at the latest.' }),
        }),
      },
    },
  });

  return { listDeliveries, getDelivery, listAttempts, replayDelivery };
}

/**
 * `/deliveries`: one per (event, endpoint), filterable (the dead-letter view is `status=dead`),
 * with the attempt log and manual replay.
 */
export function deliveryRoutes(app: ManagementApp, m: Management): void {
  const { db, transaction, keyring, rules } = m;
  const { listDeliveries, getDelivery, listAttempts, replayDelivery } = deliveryRouteDefinitions(m);
  const missing = (id: string) => problem('not_found', { detail: `No delivery ${id}.` });

  app.openapi(listDeliveries, async (c) => {
    const principal = c.get('portalCaller');
    const { account, livemode } = principal;
    const query = c.req.valid('query');
    const page = await withStatementTimeout(m.transaction, m.listTimeoutMs, (tx) =>
      paginate(tx, {
        from: 'holdfast_deliveries',
        where: {
          text: 'account_id = $1 and event_type = any($2::text[])',
          values: [account, rules.readable(principal)],
        },
        allowlist: deliverySort,
        sort: query.sort,
        cursor: query.cursor,
        limit: query.limit,
        include: query.include,
        filterColumns: { status: 'status', endpoint: 'endpoint_id', eventType: 'event_type' },
        filter: { status: query.status, endpoint: query.endpoint, eventType: query.eventType },
        binding: { account, resource: 'deliveries' },
        keyring,
        map: (row) => {
          const delivery = toDelivery(row);
          return { ...delivery, eventType: rules.known(delivery.eventType), livemode };
        },
      }),
    );
    return c.json(page, 200);
  });

  app.openapi(getDelivery, async (c) => {
    const principal = c.get('portalCaller');
    const { account, livemode } = principal;
    const { id } = c.req.valid('param');
    const delivery = await getStoredDelivery(db, { account, id });
    if (!delivery || !rules.visible(principal, delivery.eventType)) throw missing(id);
    return c.json({ ...delivery, eventType: rules.known(delivery.eventType), livemode }, 200);
  });

  app.openapi(listAttempts, async (c) => {
    const principal = c.get('portalCaller');
    const { account } = principal;
    const { id } = c.req.valid('param');
    const query = c.req.valid('query');
    const delivery = await getStoredDelivery(db, { account, id });
    if (!delivery || !rules.visible(principal, delivery.eventType)) throw missing(id);
    const page = await paginate(db, {
      from: 'holdfast_delivery_attempts',
      where: { text: 'account_id = $1 and delivery_id = $2', values: [account, id] },
      allowlist: attemptSort,
      sort: query.sort,
      cursor: query.cursor,
      limit: query.limit,
      include: query.include,
      binding: { account, resource: `attempts:${id}` },
      keyring,
      map: toAttempt,
    });
    return c.json(page, 200);
  });

  app.openapi(replayDelivery, async (c) => {
    refuseFields(c);
    const principal = c.get('portalCaller');
    const { account, livemode } = principal;
    const { id } = c.req.valid('param');
    const delivery = await transaction(async (_tx, tx) => {
      const stored = await getStoredDelivery(tx, { account, id });
      if (!stored || !rules.visible(principal, stored.eventType)) return undefined;
      // A deleted endpoint sends nothing, so only a live one's event types are checked.
      await authorizeEndpointAction(tx, m, principal, {
        id: stored.endpoint,
        lock: 'share',
        action: 'Replaying a delivery of this endpoint',
      });
      return replayStoredDelivery(tx, { account, id });
    });
    if (!delivery) throw missing(id);
    c.header('Location', `${m.basePath}/deliveries/${delivery.id}`);
    return c.json({ ...delivery, eventType: rules.known(delivery.eventType), livemode }, 202);
  });
}
