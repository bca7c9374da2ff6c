import type { Db } from '@holdfast/db';
import { enqueueEvent } from '@holdfast/webhook-delivery';
import type { EventType } from './event-types';

/** An event about a resource, written in the business transaction (the transactional outbox). */
export interface ResourceEvent {
  readonly account: string;
  readonly type: EventType;
  readonly resourceId: string;
  readonly object: Record<string, unknown>;
  readonly now: number;
}

/**
 * Records `event` and its deliveries through `@holdfast/webhook-delivery`'s outbox inside `tx`,
 * so the event exists exactly when the change it describes committed.
 *
 * @example
 * ```ts
 * await emit(tx, { account, type: 'order.refunded', resourceId: order.id, object: order, now: Date.now() });
 * ```
 */
export async function emit(tx: Db, event: ResourceEvent): Promise<void> {
  await enqueueEvent(
    tx,
    { account: event.account, type: event.type, resourceId: event.resourceId, object: event.object },
    { now: () => event.now },
  );
}
