import { hasScope, insufficientScope, type Scoped } from '@holdfast/api-keys';

/**
 * Every event type this server emits (CONTRACT sections 5 and 6). Webhook endpoints subscribe
 * to these (or `*`); anything else is refused at registration, so a typo such as
 * `payment.suceeded` is a 400 naming the known types, not a subscription that never fires.
 * `emit()` takes only these, so a new event cannot ship without joining the list.
 */
export const EVENT_TYPES = [
  'order.created',
  'order.updated',
  'order.cancelled',
  'order.deleted',
  'order.refunded',
  'payment.succeeded',
  'payment.failed',
  'subscription.created',
  'subscription.updated',
] as const;

/** One of {@link EVENT_TYPES}. */
export type EventType = (typeof EVENT_TYPES)[number];

/** `order` of `order.created`: the resource family an event type is about. */
type FamilyOf<T extends string> = T extends `${infer Family}.${string}` ? Family : never;

/**
 * The resource families events are about, each read with its own scope. Keyed by every family
 * of {@link EVENT_TYPES}: an event type of a new family does not compile until its scope is here.
 */
const FAMILY_SCOPES: Readonly<Record<FamilyOf<EventType>, string>> = {
  order: 'orders:read',
  payment: 'payments:read',
  subscription: 'subscriptions:read',
};

/**
 * The read scope an event of `type` needs (CONTRACT section 10): `order.*` needs `orders:read`,
 * `payment.*` `payments:read`, `subscription.*` `subscriptions:read`. An event carries its whole
 * resource, so seeing it or having it pushed is reading that resource.
 */
export function readScopeOf(type: string): string {
  const family = type.split('.', 1)[0] as keyof typeof FAMILY_SCOPES;
  return FAMILY_SCOPES[family] ?? '*';
}

/**
 * The one rule of what event data a key reaches (CONTRACT sections 10 and 11, "Events and scopes"
 * and "Scopes follow the data"): the event types whose read scope `principal` holds. Events,
 * deliveries, attempts, endpoint stats, replay and recovery filter by it in SQL
 * (`event_type = any(...)`), so pages, cursors and `include=total` count only what is visible.
 *
 * @example
 * ```ts
 * readableEventTypes({ scopes: new Set(['webhooks:read', 'orders:read']) }); // the order.* types
 * ```
 */
export function readableEventTypes(principal: Scoped): EventType[] {
  return EVENT_TYPES.filter((type) => hasScope(principal, readScopeOf(type)));
}

/** Whether `principal` may see an event (or a delivery of one) of `type`: {@link readableEventTypes}. */
export function eventTypeVisible(principal: Scoped, type: string): boolean {
  return readableEventTypes(principal).some((readable) => readable === type);
}

/**
 * What an endpoint subscribed to `eventTypes` carries: an absent or empty list, or `*`, means
 * every type (CONTRACT section 11), as the fan-out reads it.
 */
export function carriedEventTypes(eventTypes: readonly string[] | null | undefined): string[] {
  const types = eventTypes ?? [];
  if (types.length === 0 || types.includes('*')) return [...EVENT_TYPES];
  return [...new Set(types)];
}

/**
 * 403 (`insufficient_scope` in `WWW-Authenticate`) unless `principal` may read every event type
 * in `carried`: an action that points an endpoint's data somewhere or sends it again is reading
 * that data (CONTRACT section 11). `action` names the action in the detail.
 */
export function requireReadable(principal: Scoped, carried: readonly string[], action: string): void {
  for (const type of carried) {
    const scope = readScopeOf(type);
    if (!hasScope(principal, scope)) {
      throw insufficientScope(scope, {
        detail: `${action} needs the "${scope}" scope: the endpoint carries "${type}" events, which this API key may not read.`,
        realm: 'holdfast',
      });
    }
  }
}

/**
 * `type` as one of {@link EVENT_TYPES}: a stored delivery or event always carries one (`emit()`
 * takes no other), so anything else is a broken invariant, answered 500 rather than sent on.
 */
export function knownEventType(type: string): EventType {
  const known = EVENT_TYPES.find((candidate) => candidate === type);
  if (known === undefined)
    throw new Error(`stored event type ${JSON.stringify(type)} is not one of EVENT_TYPES`);
  return known;
}
