import { isLive } from '@holdfast/api-keys';
import { paginate } from '@holdfast/cursor-pagination';
import { listQueryShape, pageSchema } from '@holdfast/cursor-pagination/zod';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import { eventSequence } from '@holdfast/webhook-verifier/receiver';
import { createRoute, z } from '@hono/zod-openapi';
import type postgres from 'postgres';
import { problemResponses } from '../api/problem-responses';
import { INBOUND_STATUSES, InboundEventSchema } from '../api/webhook-schemas';
import type { App, Deps } from '../context';
import { isoTime } from '../iso-time';

export const inboundEventSort = defineSortAllowlist({
  fields: { createdAt: { column: 'received_at', type: 'timestamp' } },
  id: { column: 'id' },
  default: '-createdAt',
});

const listInboundEvents = createRoute({
  method: 'get',
  path: '/inbound-events',
  tags: ['Inbound events'],
  summary: 'List verified events received at /hooks/{name}',
  description:
    'Events that arrived at one of this account’s receivers, passed signature verification and were queued in the inbox, with their processing status.',
  request: {
    query: z.strictObject({
      ...listQueryShape(inboundEventSort),
      status: z
        .enum(INBOUND_STATUSES)
        .optional()
        .meta({ description: 'Only events in this processing status.' }),
    }),
  },
  responses: {
    200: {
      description: 'A page of inbound events.',
      content: { 'application/json': { schema: pageSchema(InboundEventSchema) } },
    },
    ...problemResponses([400, 401, 403]),
  },
});

/** The representation of a row of the receiver toolkit's inbox (`holdfast_webhook_inbox`). */
function toInboundEvent(row: postgres.Row): z.infer<typeof InboundEventSchema> {
  return {
    id: row.id,
    livemode: isLive(row.tenant),
    receiver: row.scope,
    webhookId: row.webhook_id,
    type: row.type,
    status: row.status,
    resource: row.resource,
    sequence: eventSequence(row.payload),
    data: row.payload,
    createdAt: isoTime(row.received_at),
    processedAt: row.processed_at === null ? null : isoTime(row.processed_at),
  };
}

/**
 * `GET /v1/inbound-events`: the receiver's inbox for the caller's account, newest first.
 *
 * @example
 * ```ts
 * inboundEventRoutes(v1, deps);
 * ```
 */
export function inboundEventRoutes(app: App, deps: Deps): void {
  const { db, keyring } = deps;
  app.openapi(listInboundEvents, async (c) => {
    const { account } = c.get('principal');
    const query = c.req.valid('query');
    const page = await paginate(db, {
      from: 'holdfast_webhook_inbox',
      where: { text: 'tenant = $1', values: [account] },
      allowlist: inboundEventSort,
      sort: query.sort,
      cursor: query.cursor,
      limit: query.limit,
      include: query.include,
      filterColumns: { status: 'status' },
      filter: { status: query.status },
      binding: { account, resource: 'inbound-events' },
      keyring,
      map: toInboundEvent,
    });
    return c.json(page, 200);
  });
}
