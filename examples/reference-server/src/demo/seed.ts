import type { Db } from '@holdfast/db';
import { holdsDeliveryData } from '@holdfast/webhook-delivery';
import { type DemoBehaviour, demoReceiverPath } from './receiver';

// The demo data set `npm start` writes on an empty database (and `npm run seed` on demand): a
// small, realistic account made through the public API itself, so every resource, event and
// delivery is what a client would have made, validated, signed and logged the same way.

/** One call of the API as a client makes it: the answer's status and parsed JSON body. */
export type ApiCall = (
  method: 'GET' | 'POST' | 'PATCH',
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<{ status: number; body: unknown }>;

/** {@link ApiCall} over HTTP to `base` with `key`. */
export function httpApiCall(base: string, key: string): ApiCall {
  return async (method, path, body, headers = {}) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: the text is reported as it is.
    }
    return { status: res.status, body: parsed };
  };
}

/** What was made, for the start-up banner and the tests. */
export interface SeedSummary {
  orders: number;
  payments: number;
  refunds: number;
  subscriptions: number;
  /** Endpoints on the built-in receiver (none unless private destinations are allowed). */
  endpoints: number;
}

/** One row in any table client-made data lands in, and the demo is not seeded. */
const HAS_DATA = `select exists (select 1 from holdfast_orders)
  or exists (select 1 from holdfast_payment_methods)
  or exists (select 1 from holdfast_payments)
  or exists (select 1 from holdfast_subscriptions) as found`;

/**
 * Whether no client has written anything yet (API keys and settings do not count): the server's
 * tables, and the endpoints and events of the sender (asked through its own function).
 */
export async function databaseIsEmpty(db: Db): Promise<boolean> {
  const [row] = await db.query<{ found: boolean }>(HAS_DATA);
  return row?.found !== true && !(await holdsDeliveryData(db));
}

function idOf(answer: { status: number; body: unknown }, what: string): string {
  const body = answer.body;
  const id = typeof body === 'object' && body !== null && 'id' in body ? body.id : undefined;
  if (answer.status >= 300 || typeof id !== 'string') {
    throw new Error(`seeding ${what} was answered ${answer.status}: ${JSON.stringify(body).slice(0, 300)}`);
  }
  return id;
}

export interface SeedOptions {
  call: ApiCall;
  /**
   * The server's own base URL (`http://127.0.0.1:3000`) when private destinations are allowed:
   * endpoints are then made on its built-in receiver. Undefined: no endpoints.
   */
  receiverBase: string | undefined;
}

/** Writes the demo data set through `call`; throws on the first answer that is not a success. */
export async function seedDemoData({ call, receiverBase }: SeedOptions): Promise<SeedSummary> {
  // Payments require an Idempotency-Key; one per request, as a careful client sends.
  const run = crypto.randomUUID();
  let key = 0;
  const idempotent = () => {
    key += 1;
    return { 'Idempotency-Key': `demo-seed-${run}-${key}` };
  };
  const post = async (path: string, body: unknown, what: string) =>
    idOf(await call('POST', path, body, idempotent()), what);

  // Endpoints first, so the events below are delivered to them.
  let endpoints = 0;
  if (receiverBase !== undefined) {
    const receivers: { behaviour: DemoBehaviour; description: string; eventTypes: string[] }[] = [
      {
        behaviour: 'ok',
        description: 'Demo: built-in receiver, answers 200',
        eventTypes: ['order.created', 'order.updated', 'order.cancelled', 'order.refunded'],
      },
      {
        behaviour: 'flaky',
        description: 'Demo: built-in receiver, fails each first attempt (503) and takes the retry',
        eventTypes: ['payment.succeeded', 'payment.failed', 'subscription.created'],
      },
      {
        behaviour: 'rejects',
        description: 'Demo: built-in receiver, refuses everything (422): its deliveries die',
        eventTypes: ['order.created', 'payment.failed'],
      },
    ];
    for (const r of receivers) {
      await post(
        '/v1/webhook-endpoints',
        {
          url: `${receiverBase}${demoReceiverPath(r.behaviour)}`,
          description: r.description,
          eventTypes: r.eventTypes,
        },
        `the ${r.behaviour} endpoint`,
      );
      endpoints += 1;
    }
  }

  const card = (last4: string, brand: string) => ({
    type: 'card',
    card: { brand, last4, expMonth: 12, expYear: 2030 },
  });
  const visa = await post('/v1/payment-methods', card('4242', 'visa'), 'a payment method');
  // A card ending in 0002 is declined by the simulated processor.
  const declined = await post('/v1/payment-methods', card('0002', 'mastercard'), 'a declined payment method');

  const order = (total: number, description: string, currency = 'EUR') =>
    post('/v1/orders', { currency, total, description }, `the order "${description}"`);
  const pending = await order(4_990, 'Two espresso cups');
  const shipped = await order(12_900, 'Hand grinder, walnut');
  const cancelled = await order(2_450, 'Filter papers (wrong size)');
  const refunded = await order(8_700, 'Pour-over kettle', 'USD');

  const ship = await call('PATCH', `/v1/orders/${shipped}`, { status: 'shipped' });
  idOf(ship, 'shipping an order');
  idOf(await call('POST', `/v1/orders/${cancelled}/cancel`, {}, idempotent()), 'cancelling an order');

  await post(
    '/v1/payments',
    { amount: 4_990, currency: 'EUR', paymentMethod: visa, order: pending },
    'a payment',
  );
  await post(
    '/v1/payments',
    { amount: 12_900, currency: 'EUR', paymentMethod: visa, order: shipped },
    'a payment',
  );
  await post(
    '/v1/payments',
    {
      amount: 8_700,
      currency: 'USD',
      paymentMethod: declined,
      order: refunded,
      description: 'First try, declined',
    },
    'a declined payment',
  );
  await post(
    '/v1/payments',
    { amount: 8_700, currency: 'USD', paymentMethod: visa, order: refunded },
    'a payment',
  );
  const refund = await call(
    'POST',
    `/v1/orders/${refunded}/refunds`,
    { amount: 2_000, reason: 'Lid arrived dented' },
    idempotent(),
  );
  idOf(refund, 'a refund');

  await post(
    '/v1/subscriptions',
    { paymentMethod: visa, plan: 'beans-monthly', quantity: 2 },
    'a subscription',
  );

  return { orders: 4, payments: 4, refunds: 1, subscriptions: 1, endpoints };
}
