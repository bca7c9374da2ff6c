import { eventTypeRules } from '@holdfast/webhook-portal';

/**
 * Every event type this server emits (CONTRACT sections 5 and 6), with the read scope that sees
 * it (CONTRACT section 10): an event carries its whole resource, so seeing it or having it pushed
 * is reading that resource. Webhook endpoints subscribe to these (or `*`); anything else is
 * refused at registration. `emit()` takes only these, so a new event cannot ship without joining
 * the map, and its scope with it.
 */
export const EVENT_TYPE_SCOPES = {
  'order.created': ['orders:read'],
  'order.updated': ['orders:read'],
  'order.cancelled': ['orders:read'],
  'order.deleted': ['orders:read'],
  'order.refunded': ['orders:read'],
  'payment.succeeded': ['payments:read'],
  'payment.failed': ['payments:read'],
  'subscription.created': ['subscriptions:read'],
  'subscription.updated': ['subscriptions:read'],
} as const satisfies Record<string, readonly string[]>;

/** One of {@link EVENT_TYPES}. */
export type EventType = keyof typeof EVENT_TYPE_SCOPES;

/** Every event type, in the order the API reference lists them. */
export const EVENT_TYPES = Object.keys(EVENT_TYPE_SCOPES) as EventType[];

/**
 * The one rule of what event data a key reaches (CONTRACT sections 10 and 11, "Events and scopes"
 * and "Scopes follow the data"), the same the webhook management API applies: events filter by
 * `readable(principal)` in SQL, so pages, cursors and `include=total` count only what is visible.
 */
export const eventTypes = eventTypeRules(EVENT_TYPE_SCOPES, { realm: 'holdfast' });
