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

/** The resource families events are about, each read with its own scope. */
const FAMILY_SCOPES = {
  order: 'orders:read',
  payment: 'payments:read',
  subscription: 'subscriptions:read',
} as const;

/**
 * The read scope an event of `type` needs (CONTRACT section 10): `order.*` needs `orders:read`,
 * `payment.*` `payments:read`, `subscription.*` `subscriptions:read`. An event carries its whole
 * resource, so seeing it or having it pushed is reading that resource.
 */
export function readScopeOf(type: string): string {
  const family = type.split('.', 1)[0] as keyof typeof FAMILY_SCOPES;
  return FAMILY_SCOPES[family] ?? '*';
}

/** The event families (`order`, `payment`, ...) whose read scope `holds` grants. */
export function readableFamilies(holds: (scope: string) => boolean): string[] {
  return Object.entries(FAMILY_SCOPES)
    .filter(([, scope]) => holds(scope))
    .map(([family]) => family);
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
