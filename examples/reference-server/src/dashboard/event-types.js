// @ts-check
/** Every event type the server emits: src/event-types.ts, which a test keeps this list equal to. */
export const KNOWN_EVENT_TYPES = [
  'order.created',
  'order.updated',
  'order.cancelled',
  'order.deleted',
  'order.refunded',
  'payment.succeeded',
  'payment.failed',
  'subscription.created',
  'subscription.updated',
];
