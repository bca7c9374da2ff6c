import { paginate } from '@holdfast/cursor-pagination';
import { problem } from '@holdfast/problem-details';
import { getEvent as getStoredEvent, toEvent } from '@holdfast/webhook-delivery';
import type { App, Deps } from '../../context';
import type { EventType } from '../../event-types';
import { eventTypes } from '../../event-types';
import { eventSort, getEvent, listEvents } from './schema';

/**
 * `/v1/events`: what happened, exactly as delivered (the stored payload of each event).
 *
 * @example
 * ```ts
 * eventRoutes(v1, deps);
 * ```
 */
export function eventRoutes(app: App, deps: Deps): void {
  const { db, keyring } = deps;
  app.openapi(listEvents, async (c) => {
    const principal = c.get('principal');
    const { account, livemode } = principal;
    const query = c.req.valid('query');
    // Only events whose resource this key may read (CONTRACT section 10); the rest are absent.
    const page = await paginate(db, {
      from: 'holdfast_events',
      where: {
        text: 'account_id = $1 and type = any($2::text[])',
        values: [account, eventTypes.readable(principal)],
      },
      allowlist: eventSort,
      sort: query.sort,
      cursor: query.cursor,
      limit: query.limit,
      include: query.include,
      binding: { account, resource: 'events' },
      keyring,
      map: (row) => {
        const event = toEvent(row);
        return { ...event, type: eventTypes.known(event.type) as EventType, livemode };
      },
    });
    return c.json(page, 200);
  });
  app.openapi(getEvent, async (c) => {
    const principal = c.get('principal');
    const { account, livemode } = principal;
    const { id } = c.req.valid('param');
    const event = await getStoredEvent(db, { account, id });
    // An event of a resource the key may not read is answered as if absent.
    if (!event || !eventTypes.visible(principal, event.type)) {
      throw problem('not_found', { detail: `No event ${id}.` });
    }
    return c.json({ ...event, type: eventTypes.known(event.type) as EventType, livemode }, 200);
  });
}
