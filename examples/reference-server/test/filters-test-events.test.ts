import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventSchema } from '../src/api/webhook-schemas';
import { exampleObject, examplePayload } from '../src/event-examples';
import { EVENT_TYPES } from '../src/event-types';
import { OrderSchema, RefundSchema } from '../src/resources/orders/schema';
import { PaymentSchema } from '../src/resources/payments/schema';
import { SubscriptionSchema } from '../src/resources/subscriptions/schema';
import {
  ACCOUNT,
  type ApiResponse,
  api,
  eventually,
  OTHER_ACCOUNT,
  type Receiver,
  startReceiver,
  startTestServer,
  type TestServer,
} from './webhooks-harness';

// CONTRACT section 11, "Payload filters" and "Test events", over real HTTP.

const KEYS = {
  all: 'hf_test_filtersAllScopes0000000000001',
  other: 'hf_test_filtersOtherAccount000000001',
  ordersOnly: 'hf_test_filtersHooksOrders0000000001',
  hooksRead: 'hf_test_filtersHooksRead000000000001',
} as const;

const API_KEYS = JSON.stringify([
  { key: KEYS.all, account: ACCOUNT, scopes: ['*'] },
  { key: KEYS.other, account: OTHER_ACCOUNT, scopes: ['*'] },
  {
    key: KEYS.ordersOnly,
    account: ACCOUNT,
    scopes: ['webhooks:write', 'webhooks:read', 'orders:read', 'orders:write'],
  },
  { key: KEYS.hooksRead, account: ACCOUNT, scopes: ['webhooks:read', 'orders:read'] },
]);

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startTestServer({ HOLDFAST_API_KEYS: API_KEYS, HOLDFAST_RETRY_SCHEDULE: '1h' });
});

afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const call = (method: string, path: string, options: Parameters<typeof api>[3] = {}) =>
  api(server.url, method, path, { key: KEYS.all, ...options });

function expectProblem(response: ApiResponse, status: number, code: string): void {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body.code).toBe(code);
}

async function endpoint(body: Record<string, unknown> = {}, key: string = KEYS.all) {
  const response = await call('POST', '/v1/webhook-endpoints', { key, body: { url: receiver.url, ...body } });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}

describe('filters', () => {
  it('shows filter on create, fetch, list and update; null when unset; PATCH null removes it', async () => {
    const filter = { type: 'order.created', 'data.object.total': { $gte: 10000 } };
    const created = await endpoint({ filter, description: 'big orders' });
    expect(created.filter).toEqual(filter);
    const plain = await endpoint();
    expect(plain.filter).toBeNull();
    expect((await call('GET', `/v1/webhook-endpoints/${created.id}`)).body.filter).toEqual(filter);
    const listed = await call('GET', '/v1/webhook-endpoints?limit=100');
    const byId = new Map(listed.body.data.map((e: { id: string; filter: unknown }) => [e.id, e.filter]));
    expect(byId.get(created.id)).toEqual(filter);
    expect(byId.get(plain.id)).toBeNull();

    const changed = await call('PATCH', `/v1/webhook-endpoints/${created.id}`, {
      body: { filter: { $or: [{ 'data.object.currency': 'EUR' }, { 'data.object.currency': 'USD' }] } },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.filter).toEqual({
      $or: [{ 'data.object.currency': 'EUR' }, { 'data.object.currency': 'USD' }],
    });
    const untouched = await call('PATCH', `/v1/webhook-endpoints/${created.id}`, {
      body: { description: 'x' },
    });
    expect(untouched.body.filter).toEqual(changed.body.filter);
    const removed = await call('PATCH', `/v1/webhook-endpoints/${created.id}`, { body: { filter: null } });
    expect(removed.body.filter).toBeNull();
    for (const id of [created.id, plain.id]) await call('DELETE', `/v1/webhook-endpoints/${id}`);
  });

  const invalid: [string, unknown, string][] = [
    ['not an object', ['type'], '#/filter'],
    ['unknown operator', { 'data.object.total': { $gtx: 1 } }, '#/filter/data.object.total/%24gtx'],
    ['unknown top-level operator', { $where: 'x' }, '#/filter/%24where'],
    ['bad path', { 'data..total': 1 }, '#/filter/data..total'],
    ['bad operand', { 'data.object.total': { $in: 3 } }, '#/filter/data.object.total/%24in'],
    ['nested place', { $and: [{ a: 1 }, { b: { $exists: 'yes' } }] }, '#/filter/%24and/1/b/%24exists'],
    [
      'more than 50 conditions',
      Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])),
      '#/filter',
    ],
    ['more than 4 KiB', { description: 'x'.repeat(4100) }, '#/filter'],
  ];
  it.each(invalid)(
    'refuses a filter that is %s: 400 validation_failed naming the place, nothing written',
    async (_name, filter, pointer) => {
      const before = (await call('GET', '/v1/webhook-endpoints?include=total')).body.pageInfo.totalCount;
      const created = await call('POST', '/v1/webhook-endpoints', { body: { url: receiver.url, filter } });
      expectProblem(created, 400, 'validation_failed');
      expect(created.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
      expect((await call('GET', '/v1/webhook-endpoints?include=total')).body.pageInfo.totalCount).toBe(
        before,
      );

      const target = await endpoint({ filter: { type: 'order.created' } });
      const patched = await call('PATCH', `/v1/webhook-endpoints/${target.id}`, { body: { filter } });
      expectProblem(patched, 400, 'validation_failed');
      expect(patched.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
      expect((await call('GET', `/v1/webhook-endpoints/${target.id}`)).body.filter).toEqual({
        type: 'order.created',
      });
      await call('DELETE', `/v1/webhook-endpoints/${target.id}`);
    },
  );

  it('a filter change needs the read scope of every type the endpoint carries (CONTRACT section 12)', async () => {
    const payments = await endpoint({ eventTypes: ['payment.succeeded'] });
    expectProblem(
      await call('PATCH', `/v1/webhook-endpoints/${payments.id}`, {
        key: KEYS.ordersOnly,
        body: { filter: { 'data.object.amount': { $gt: 0 } } },
      }),
      403,
      'forbidden',
    );
    expect((await call('GET', `/v1/webhook-endpoints/${payments.id}`)).body.filter).toBeNull();
    const orders = await endpoint({ eventTypes: ['order.created'] });
    const changed = await call('PATCH', `/v1/webhook-endpoints/${orders.id}`, {
      key: KEYS.ordersOnly,
      body: { filter: { 'data.object.total': { $gt: 0 } } },
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.filter).toEqual({ 'data.object.total': { $gt: 0 } });
    await call('DELETE', `/v1/webhook-endpoints/${orders.id}`);
    expectProblem(
      await call('PATCH', `/v1/webhook-endpoints/${payments.id}`, {
        key: KEYS.hooksRead,
        body: { filter: null },
      }),
      403,
      'forbidden',
    );
    await call('DELETE', `/v1/webhook-endpoints/${payments.id}`);
  });

  it('bounds the answer: at most 20 errors, however many places are wrong', async () => {
    const filter = Object.fromEntries(Array.from({ length: 45 }, (_, i) => [`k${i}`, { [`$bad${i}`]: 1 }]));
    const response = await call('POST', '/v1/webhook-endpoints', { body: { url: receiver.url, filter } });
    expectProblem(response, 400, 'validation_failed');
    expect(response.body.errors.length).toBeLessThanOrEqual(20);
    expect(response.body.errors.length).toBeGreaterThan(1);
  });

  it('creates a delivery only for events the filter matches', async () => {
    const big = await endpoint({
      eventTypes: ['order.created'],
      filter: { 'data.object.total': { $gte: 10000 } },
    });
    const all = await endpoint({ eventTypes: ['order.created'] });
    const orders = [];
    for (const total of [5000, 20000, 9999, 10000]) {
      const response = await call('POST', '/v1/orders', { body: { currency: 'EUR', total } });
      expect(response.status).toBe(201);
      orders.push(response.body.id);
    }
    const deliveredTo = async (endpointId: string) => {
      const page = await call('GET', `/v1/deliveries?endpoint=${endpointId}&limit=100`);
      const events = await Promise.all(
        page.body.data.map(
          async (d: { event: string }) => (await call('GET', `/v1/events/${d.event}`)).body.data.object.id,
        ),
      );
      return new Set(events);
    };
    expect(await deliveredTo(big.id)).toEqual(new Set([orders[1], orders[3]]));
    expect(await deliveredTo(all.id)).toEqual(new Set(orders));
    for (const id of [big.id, all.id]) await call('DELETE', `/v1/webhook-endpoints/${id}`);
  });
});

describe('test events', () => {
  it('sends documented examples that are valid instances of their schemas, with no extra field', () => {
    for (const type of EVENT_TYPES) {
      const family = type.split('.')[0];
      const object =
        type === 'order.refunded'
          ? OrderSchema.extend({ refund: RefundSchema.strict() }).strict()
          : family === 'order'
            ? OrderSchema.strict()
            : family === 'payment'
              ? PaymentSchema.strict()
              : SubscriptionSchema.strict();
      const payload = examplePayload(type);
      expect(object.safeParse(payload.data.object).success, type).toBe(true);
      expect(EventSchema.safeParse(payload).success, type).toBe(true);
      expect(exampleObject(type, true).livemode).toBe(true);
    }
  });

  it('are explained, with filters, in /docs and declared in /openapi.json', async () => {
    const docs = await (await fetch(new URL('/docs', server.url))).text();
    expect(docs).toContain('<h3>Filters</h3>');
    expect(docs).toContain('<h3>Test events</h3>');
    const document = await (await fetch(new URL('/openapi.json', server.url))).json();
    expect(Object.keys(document.paths['/v1/webhook-endpoints/{id}/test'].post.responses)).toEqual(
      expect.arrayContaining(['202', '403', '404', '409', '422']),
    );
    expect(document.components.schemas.WebhookEndpoint.properties.filter).toBeDefined();
    expect(document.components.schemas.OrderCreatedEvent.example.data.object).toEqual(
      exampleObject('order.created', false),
    );
  });

  it('sends the documented example, marked test, to that endpoint only; 202 with Location; signed and logged', async () => {
    const target = await endpoint({
      eventTypes: ['order.created', 'payment.succeeded'],
      filter: { type: 'never' },
    });
    const bystander = await endpoint({ eventTypes: ['payment.succeeded'] });
    const before = receiver.received.length;
    const response = await call('POST', `/v1/webhook-endpoints/${target.id}/test`, {
      body: { eventType: 'payment.succeeded' },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(202);
    expect(response.body).toMatchObject({
      endpoint: target.id,
      eventType: 'payment.succeeded',
      livemode: false,
    });
    expect(response.body.id).toMatch(/^dlv_/);
    expect(response.headers.get('location')).toBe(`/v1/deliveries/${response.body.id}`);

    const attempts = await eventually(
      async () => {
        const page = await call('GET', `/v1/deliveries/${response.body.id}/attempts`);
        return page.body.data?.length > 0 ? page.body.data : undefined;
      },
      15_000,
      'the test delivery attempt',
    );
    expect(attempts[0].status).toBe(204);
    const delivered = receiver.received.slice(before).filter((r) => JSON.parse(r.body).test === true);
    expect(delivered).toHaveLength(1);
    const body = JSON.parse(delivered[0]?.body ?? '{}');
    expect(body).toMatchObject({ type: 'payment.succeeded', test: true, sequence: 0 });
    expect(body.data.object).toEqual(exampleObject('payment.succeeded', false));
    expect(delivered[0]?.headers['webhook-id']).toBe(body.id);
    expect(delivered[0]?.headers['webhook-signature']).toMatch(/^v1,/);
    expect((await call('GET', `/v1/deliveries/${response.body.id}`)).body.status).toBe('succeeded');
    const event = await call('GET', `/v1/events/${body.id}`);
    expect(event.body.test).toBe(true);
    const others = await call('GET', `/v1/deliveries?endpoint=${bystander.id}`);
    expect(others.body.data.filter((d: { event: string }) => d.event === body.id)).toEqual([]);
    for (const id of [target.id, bystander.id]) await call('DELETE', `/v1/webhook-endpoints/${id}`);
  });

  it('refuses what it must: 422 not carried, 400 unknown type or field, 404, 409 disabled, 403 scopes, 401', async () => {
    const orders = await endpoint({ eventTypes: ['order.created'] });
    const payments = await endpoint({ eventTypes: ['payment.succeeded'] });
    const path = (id: string) => `/v1/webhook-endpoints/${id}/test`;
    const count = async () => (await call('GET', '/v1/deliveries?include=total')).body.pageInfo.totalCount;
    const before = await count();

    expectProblem(
      await call('POST', path(orders.id), { body: { eventType: 'order.refunded' } }),
      422,
      'unprocessable',
    );
    expectProblem(
      await call('POST', path(orders.id), { body: { eventType: 'order.exploded' } }),
      400,
      'validation_failed',
    );
    expectProblem(await call('POST', path(orders.id), { body: {} }), 400, 'validation_failed');
    expectProblem(
      await call('POST', path(orders.id), { body: { eventType: 'order.created', colour: 1 } }),
      400,
      'unknown_field',
    );
    expectProblem(
      await call('POST', path('we_nothere0000000000000'), { body: { eventType: 'order.created' } }),
      404,
      'not_found',
    );
    expectProblem(
      await call('POST', path(orders.id), { key: KEYS.other, body: { eventType: 'order.created' } }),
      404,
      'not_found',
    );
    const forbidden = await call('POST', path(payments.id), {
      key: KEYS.ordersOnly,
      body: { eventType: 'payment.succeeded' },
    });
    expectProblem(forbidden, 403, 'forbidden');
    expect(forbidden.headers.get('www-authenticate')).toContain('insufficient_scope');
    expectProblem(
      await call('POST', path(orders.id), { key: KEYS.hooksRead, body: { eventType: 'order.created' } }),
      403,
      'forbidden',
    );
    expectProblem(
      await call('POST', path(orders.id), { key: null, body: { eventType: 'order.created' } }),
      401,
      'unauthenticated',
    );

    await call('PATCH', `/v1/webhook-endpoints/${orders.id}`, { body: { status: 'disabled' } });
    expectProblem(
      await call('POST', path(orders.id), { body: { eventType: 'order.created' } }),
      409,
      'invalid_state_transition',
    );
    expect(await count()).toBe(before);

    // A key that reads what the endpoint carries may test it.
    await call('PATCH', `/v1/webhook-endpoints/${orders.id}`, { body: { status: 'active' } });
    const allowed = await call('POST', path(orders.id), {
      key: KEYS.ordersOnly,
      body: { eventType: 'order.created' },
    });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(202);
    expect(await count()).toBe(before + 1);
    for (const id of [orders.id, payments.id]) await call('DELETE', `/v1/webhook-endpoints/${id}`);
  });
});
