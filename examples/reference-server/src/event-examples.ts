import type { EventType } from './event-types';

// The documented example of each event type: the `example` of its payload under the OpenAPI
// document's `webhooks` (webhooks-openapi.ts), and what `POST /v1/webhook-endpoints/{id}/test`
// sends (with `"test": true`). Each `data.object` is a valid instance of its resource schema.

const AT = '2026-11-22T16:30:19.123Z';
const LATER = '2026-11-22T16:45:02.481Z';

const order = {
  id: 'ord_2x8Kd0qLw1Yc7VnR4sT9uA',
  status: 'pending',
  currency: 'EUR',
  total: 4200,
  amountRefunded: 0,
  description: 'Two notebooks',
  metadata: { reference: 'A-1042' },
  createdAt: AT,
  updatedAt: AT,
};

const payment = {
  id: 'pay_2x8Kd0qLw1Yc7VnR4sT9uA',
  status: 'succeeded',
  amount: 4200,
  currency: 'EUR',
  paymentMethod: 'pm_2x8Kd0qLw1Yc7VnR4sT9uA',
  order: 'ord_2x8Kd0qLw1Yc7VnR4sT9uA',
  description: null,
  failureReason: null,
  createdAt: AT,
  updatedAt: AT,
};

const subscription = {
  id: 'sub_2x8Kd0qLw1Yc7VnR4sT9uA',
  status: 'active',
  paymentMethod: 'pm_2x8Kd0qLw1Yc7VnR4sT9uA',
  plan: 'pro-monthly',
  quantity: 3,
  metadata: {},
  canceledAt: null,
  createdAt: AT,
  updatedAt: AT,
};

const OBJECTS: Readonly<Record<EventType, Record<string, unknown>>> = {
  'order.created': order,
  'order.updated': { ...order, status: 'shipped', updatedAt: LATER },
  'order.cancelled': { ...order, status: 'cancelled', updatedAt: LATER },
  'order.deleted': { ...order, updatedAt: LATER },
  'order.refunded': {
    ...order,
    status: 'shipped',
    amountRefunded: 1500,
    updatedAt: LATER,
    refund: {
      id: 're_2x8Kd0qLw1Yc7VnR4sT9uA',
      order: order.id,
      amount: 1500,
      currency: 'EUR',
      reason: 'One notebook arrived damaged',
      createdAt: LATER,
      updatedAt: LATER,
    },
  },
  'payment.succeeded': payment,
  'payment.failed': { ...payment, status: 'failed', failureReason: 'card_declined' },
  'subscription.created': subscription,
  'subscription.updated': { ...subscription, quantity: 5, updatedAt: LATER },
};

/**
 * The documented example resource of an event of `type` (its `data.object`), with `livemode`
 * (and a refund's) set as given: a test event sent with a test key says `livemode: false`.
 *
 * @example
 * ```ts
 * exampleObject('order.created', false).total; // 4200
 * ```
 */
export function exampleObject(type: EventType, livemode: boolean): Record<string, unknown> {
  const object: Record<string, unknown> = { ...OBJECTS[type], livemode };
  const refund = object.refund;
  if (typeof refund === 'object' && refund !== null) object.refund = { ...refund, livemode };
  return object;
}

/**
 * The documented example payload of `type`, as the OpenAPI document shows it.
 *
 * @example
 * ```ts
 * examplePayload('payment.failed').data.object.failureReason; // 'card_declined'
 * ```
 */
export function examplePayload(type: EventType): {
  id: string;
  livemode: boolean;
  type: EventType;
  createdAt: string;
  sequence: number;
  data: { object: Record<string, unknown> };
} {
  return {
    id: 'evt_2x8Kd0qLw1Yc7VnR4sT9uA',
    livemode: false,
    type,
    createdAt: LATER,
    sequence: 1,
    data: { object: exampleObject(type, false) },
  };
}
