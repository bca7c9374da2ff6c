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
