import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT,
  type ApiResponse,
  api,
  eventually,
  type Receiver,
  startReceiver,
  startTestServer,
  type TestServer,
} from './webhooks-harness';

// CONTRACT section 11, "Scopes follow the data", over real HTTP: every action that points an
// endpoint's data somewhere or sends it again needs the read scope of every event type the
// endpoint carries, and deliveries and their attempts are visible only where their event is.

const KEYS = {
  all: 'hf_test_scopesAllScopes00000000000001',
  hooksWrite: 'hf_test_scopesHooksWrite0000000000001',
  hooksRead: 'hf_test_scopesHooksRead00000000000001',
  readers: 'hf_test_scopesHooksAndReaders0000001',
  payRead: 'hf_test_scopesHooksPaymentsRead00001',
  ordersWrite: 'hf_test_scopesHooksOrders0000000000001',
} as const;

const API_KEYS = JSON.stringify([
  { key: KEYS.all, account: ACCOUNT, scopes: ['*'] },
  { key: KEYS.hooksWrite, account: ACCOUNT, scopes: ['webhooks:write'] },
  { key: KEYS.hooksRead, account: ACCOUNT, scopes: ['webhooks:read'] },
  {
    key: KEYS.readers,
    account: ACCOUNT,
    scopes: ['webhooks:write', 'payments:read', 'orders:read', 'subscriptions:read'],
  },
  { key: KEYS.payRead, account: ACCOUNT, scopes: ['webhooks:read', 'payments:read'] },
  { key: KEYS.ordersWrite, account: ACCOUNT, scopes: ['webhooks:write', 'orders:read'] },
]);

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  // A failed attempt waits an hour: a delivery answered 500 stays queued (`failed`) for the test.
  server = await startTestServer({ HOLDFAST_API_KEYS: API_KEYS, HOLDFAST_RETRY_SCHEDULE: '1h' });
});

afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const call = (method: string, path: string, options: Parameters<typeof api>[3] = {}) =>
  api(server.url, method, path, { key: KEYS.all, ...options });

function expectScopeRefusal(response: ApiResponse, scope: string): void {
  expect(response.status, JSON.stringify(response.body)).toBe(403);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body.code).toBe('forbidden');
  expect(response.headers.get('www-authenticate')).toBe(
    `Bearer realm="holdfast", error="insufficient_scope", scope="${scope}"`,
  );
}

function expectNotFound(response: ApiResponse): void {
  expect(response.status, JSON.stringify(response.body)).toBe(404);
  expect(response.body.code).toBe('not_found');
}

async function createEndpoint(body: Record<string, unknown>, key: string = KEYS.all) {
  const response = await call('POST', '/v1/webhook-endpoints', { key, body: { url: receiver.url, ...body } });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}

async function endpointCount(): Promise<number> {
  const list = await call('GET', '/v1/webhook-endpoints?limit=100&include=total');
  return list.body.pageInfo.totalCount;
}

let paymentSeq = 0;
async function pay(amount = 500): Promise<string> {
  const card = await call('POST', '/v1/payment-methods', {
    body: { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 } },
  });
  expect(card.status).toBe(201);
  const payment = await call('POST', '/v1/payments', {
    headers: { 'idempotency-key': `scopes-pay-${++paymentSeq}` },
    body: { amount, currency: 'EUR', paymentMethod: card.body.id },
  });
  expect(payment.status, JSON.stringify(payment.body)).toBe(201);
  return payment.body.id;
}

/** Waits for the delivery of `type` about `resource` to `endpoint` to reach `status`. */
async function deliveryOf(endpoint: string, type: string, status: string) {
  return eventually(
    async () => {
      const list = await call('GET', `/v1/deliveries?endpoint=${endpoint}&eventType=${type}&limit=100`);
      return list.body.data.find((d: { status: string }) => d.status === status);
    },
    20_000,
    `a ${status} ${type} delivery to ${endpoint}`,
  );
}

describe('creating an endpoint', () => {
  it('needs the read scope of every type it carries: absent, [] and * mean every type', async () => {
    const before = await endpointCount();
    for (const [eventTypes, scope] of [
      [undefined, 'orders:read'],
      [[], 'orders:read'],
      [['*'], 'orders:read'],
      [['payment.succeeded'], 'payments:read'],
      [['order.created', 'subscription.created'], 'orders:read'],
    ] as const) {
      const body = eventTypes === undefined ? { url: receiver.url } : { url: receiver.url, eventTypes };
      expectScopeRefusal(await call('POST', '/v1/webhook-endpoints', { key: KEYS.hooksWrite, body }), scope);
    }
    // webhooks:write with orders:read alone still may not subscribe to every type.
    expectScopeRefusal(
      await call('POST', '/v1/webhook-endpoints', { key: KEYS.ordersWrite, body: { url: receiver.url } }),
      'payments:read',
    );
    expect(await endpointCount()).toBe(before);

    const made: string[] = [];
    for (const eventTypes of [undefined, [], ['*'], ['payment.succeeded']]) {
      const endpoint = await createEndpoint(eventTypes === undefined ? {} : { eventTypes }, KEYS.readers);
      made.push(endpoint.id);
    }
    made.push((await createEndpoint({ eventTypes: ['order.created'] }, KEYS.ordersWrite)).id);
    expect(await endpointCount()).toBe(before + made.length);
    for (const id of made) {
      expect((await call('DELETE', `/v1/webhook-endpoints/${id}`)).status).toBe(204);
    }
  });
});

describe('actions on an endpoint that carries payment.*', () => {
  it('refuses PATCH url, PATCH eventTypes, enabling and rotate-secret to a webhooks-only key; nothing changes', async () => {
    const endpoint = await createEndpoint({ eventTypes: ['payment.succeeded'] });
    const read = async () => (await call('GET', `/v1/webhook-endpoints/${endpoint.id}`)).body;
    const patch = (body: Record<string, unknown>, key: string = KEYS.hooksWrite) =>
      call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { key, body });

    const original = await read();
    expectScopeRefusal(await patch({ url: 'http://127.0.0.1:1024/stolen' }), 'payments:read');
    expect(await read()).toEqual(original);
    expectScopeRefusal(await patch({ eventTypes: ['payment.failed'] }), 'payments:read');
    expect(await read()).toEqual(original);
    // The types it carries now are checked first: payment.* (the new ones are, too).
    expectScopeRefusal(await patch({ eventTypes: ['*'] }), 'payments:read');
    expect(await read()).toEqual(original);
    expectScopeRefusal(await patch({ eventTypes: ['order.created'] }), 'payments:read');
    expect(await read()).toEqual(original);
    expectScopeRefusal(
      await call('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { key: KEYS.hooksWrite }),
      'payments:read',
    );
    expect(await read()).toEqual(original);
    expectScopeRefusal(await patch({ status: 'active' }), 'payments:read');
    expect(await read()).toEqual(original);

    // Any other change too (CONTRACT section 12): a description, a rate, disabling
    // (endpoint-field-scopes.test.ts goes through every field).
    expectScopeRefusal(await patch({ description: 'ops', maxPerSecond: 5 }), 'payments:read');
    expectScopeRefusal(await patch({ status: 'disabled' }), 'payments:read');
    expect(await read()).toEqual(original);
    const disabled = await patch({ status: 'disabled' }, KEYS.readers);
    expect(disabled.status).toBe(200);
    expect(disabled.body.status).toBe('disabled');
    const afterDisable = await read();
    expectScopeRefusal(await patch({ status: 'active' }), 'payments:read');
    expect(await read()).toEqual(afterDisable);

    // A key that reads payments may do all of it.
    expect((await patch({ status: 'active' }, KEYS.readers)).status).toBe(200);
    expect((await patch({ url: `${receiver.url}?moved=1` }, KEYS.readers)).status).toBe(200);
    const rotated = await call('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, {
      key: KEYS.readers,
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect((await call('DELETE', `/v1/webhook-endpoints/${endpoint.id}`)).status).toBe(204);
  });

  it('refuses replay and recover to a key that cannot read every type the endpoint carries; nothing is re-queued', async () => {
    const endpoint = await createEndpoint({ eventTypes: ['order.created', 'payment.succeeded'] });
    receiver.respond = () => ({ status: 500 });
    try {
      await pay();
      const order = await call('POST', '/v1/orders', { body: { currency: 'EUR', total: 700 } });
      expect(order.status).toBe(201);
      const paymentDelivery = await deliveryOf(endpoint.id, 'payment.succeeded', 'failed');
      const orderDelivery = await deliveryOf(endpoint.id, 'order.created', 'failed');
      const snapshot = async () =>
        (await call('GET', `/v1/deliveries?endpoint=${endpoint.id}&limit=100`)).body.data;
      const before = await snapshot();

      // The payment delivery is absent to both webhooks-only keys: 404, as if it did not exist.
      expectNotFound(
        await call('POST', `/v1/deliveries/${paymentDelivery.id}/replay`, { key: KEYS.hooksWrite }),
      );
      expectNotFound(
        await call('POST', `/v1/deliveries/${orderDelivery.id}/replay`, { key: KEYS.hooksWrite }),
      );
      // The order delivery is visible to orders:read, but its endpoint also carries payment.*.
      expectScopeRefusal(
        await call('POST', `/v1/deliveries/${orderDelivery.id}/replay`, { key: KEYS.ordersWrite }),
        'payments:read',
      );
      for (const key of [KEYS.hooksWrite, KEYS.ordersWrite]) {
        const recovered = await call('POST', `/v1/webhook-endpoints/${endpoint.id}/recover`, {
          key,
          body: { since: '2000-01-01T00:00:00Z' },
        });
        expectScopeRefusal(recovered, key === KEYS.hooksWrite ? 'orders:read' : 'payments:read');
      }
      expect(await snapshot()).toEqual(before);

      const replayed = await call('POST', `/v1/deliveries/${paymentDelivery.id}/replay`, {
        key: KEYS.readers,
      });
      expect(replayed.status, JSON.stringify(replayed.body)).toBe(202);
      const recovered = await call('POST', `/v1/webhook-endpoints/${endpoint.id}/recover`, {
        key: KEYS.readers,
        body: { since: '2000-01-01T00:00:00Z' },
      });
      expect(recovered.status).toBe(202);
    } finally {
      receiver.respond = () => ({ status: 204 });
      await call('DELETE', `/v1/webhook-endpoints/${endpoint.id}`);
    }
  });

  it('does not let a narrowed endpoint send its queued payment deliveries to a new url, nor recover them', async () => {
    const endpoint = await createEndpoint({ eventTypes: ['payment.succeeded', 'order.created'] });
    receiver.respond = () => ({ status: 500 });
    try {
      await pay();
      const queued = await deliveryOf(endpoint.id, 'payment.succeeded', 'failed');
      // Dropping payment.* from the endpoint is a change of an endpoint carrying payment.*: it
      // needs payments:read (CONTRACT section 12).
      expectScopeRefusal(
        await call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, {
          key: KEYS.ordersWrite,
          body: { eventTypes: ['order.created'] },
        }),
        'payments:read',
      );
      const narrowed = await call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, {
        key: KEYS.readers,
        body: { eventTypes: ['order.created'] },
      });
      expect(narrowed.status, JSON.stringify(narrowed.body)).toBe(200);
      // But the payment delivery still queued for it would follow a new url, or an enabling.
      expectScopeRefusal(
        await call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, {
          key: KEYS.ordersWrite,
          body: { url: 'http://127.0.0.1:1024/stolen' },
        }),
        'payments:read',
      );
      expect((await call('GET', `/v1/webhook-endpoints/${endpoint.id}`)).body.url).toBe(receiver.url);
      // Recovery re-queues only what the key may read: the payment delivery stays as it was.
      const recovered = await call('POST', `/v1/webhook-endpoints/${endpoint.id}/recover`, {
        key: KEYS.ordersWrite,
        body: { since: '2000-01-01T00:00:00Z' },
      });
      expect(recovered.status).toBe(202);
      expect(recovered.body).toEqual({ recovered: 0 });
      const after = await call('GET', `/v1/deliveries/${queued.id}`);
      expect(after.body.nextAttemptAt).toBe(queued.nextAttemptAt);
      expect(after.body.status).toBe('failed');
    } finally {
      receiver.respond = () => ({ status: 204 });
      await call('DELETE', `/v1/webhook-endpoints/${endpoint.id}`);
    }
  });
});

describe('deliveries and attempts follow the events rule', () => {
  it('hides payment.* deliveries from webhooks:read in lists, counts, pages, by id, attempts and stats; shows them to payments:read', async () => {
    const endpoint = await createEndpoint({ eventTypes: ['payment.succeeded', 'order.created'] });
    for (let i = 0; i < 3; i++) await pay(100 + i);
    for (let i = 0; i < 2; i++) {
      expect((await call('POST', '/v1/orders', { body: { currency: 'EUR', total: 900 + i } })).status).toBe(
        201,
      );
    }
    const all = await eventually(async () => {
      const list = await call('GET', `/v1/deliveries?endpoint=${endpoint.id}&status=succeeded&limit=100`);
      return list.body.data.length === 5 ? list.body.data : undefined;
    });
    const paymentIds = all
      .filter((d: { eventType: string }) => d.eventType === 'payment.succeeded')
      .map((d: { id: string }) => d.id);
    expect(paymentIds).toHaveLength(3);
    const orderIds = all
      .filter((d: { eventType: string }) => d.eventType === 'order.created')
      .map((d: { id: string }) => d.id);

    const scoped = `/v1/deliveries?endpoint=${endpoint.id}`;
    // webhooks:read alone: none of them, in the list and in its count.
    const listed = await call('GET', `${scoped}&include=total&limit=100`, { key: KEYS.hooksRead });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([]);
    expect(listed.body.pageInfo.totalCount).toBe(0);
    // With orders:read: the two order deliveries, never the payment ones.
    const orders = await call('GET', `${scoped}&include=total&limit=100`, { key: KEYS.ordersWrite });
    expect(orders.body.data.map((d: { id: string }) => d.id).sort()).toEqual([...orderIds].sort());
    expect(orders.body.pageInfo.totalCount).toBe(2);
    const payOnly = await call('GET', `${scoped}&eventType=payment.succeeded&include=total`, {
      key: KEYS.hooksRead,
    });
    expect(payOnly.body.data).toEqual([]);
    expect(payOnly.body.pageInfo.totalCount).toBe(0);

    // payments:read (with webhooks:read): the three payment deliveries, one page at a time.
    const seen: string[] = [];
    let cursor: string | undefined;
    let totalCount: number | undefined;
    do {
      const page: ApiResponse = await call(
        'GET',
        `${scoped}&limit=1&include=total${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { key: KEYS.payRead },
      );
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      seen.push(...page.body.data.map((d: { id: string }) => d.id));
      totalCount ??= page.body.pageInfo.totalCount;
      cursor = page.body.pageInfo.hasMore ? page.body.pageInfo.nextCursor : undefined;
    } while (cursor);
    expect(seen.sort()).toEqual([...paymentIds].sort());
    expect(totalCount).toBe(3);

    for (const id of paymentIds) {
      expectNotFound(await call('GET', `/v1/deliveries/${id}`, { key: KEYS.hooksRead }));
      expectNotFound(await call('GET', `/v1/deliveries/${id}/attempts`, { key: KEYS.hooksRead }));
      expect((await call('GET', `/v1/deliveries/${id}`, { key: KEYS.payRead })).status).toBe(200);
      const attempts = await call('GET', `/v1/deliveries/${id}/attempts`, { key: KEYS.payRead });
      expect(attempts.status).toBe(200);
      expect(attempts.body.data).toHaveLength(1);
    }
    for (const id of orderIds) {
      expectNotFound(await call('GET', `/v1/deliveries/${id}`, { key: KEYS.hooksRead }));
      expectNotFound(await call('GET', `/v1/deliveries/${id}`, { key: KEYS.payRead }));
      expect((await call('GET', `/v1/deliveries/${id}`, { key: KEYS.readers })).status).toBe(200);
    }

    // The endpoint's health counts only the attempts the key may see.
    const attemptsIn = async (key: string) => {
      const stats = await call('GET', `/v1/webhook-endpoints/${endpoint.id}/stats`, { key });
      expect(stats.status).toBe(200);
      return stats.body.buckets.reduce((sum: number, b: { succeeded: number }) => sum + b.succeeded, 0);
    };
    expect(await attemptsIn(KEYS.hooksRead)).toBe(0);
    expect(await attemptsIn(KEYS.payRead)).toBe(3);
    expect(await attemptsIn(KEYS.all)).toBe(5);

    // Events, by the same rule.
    const events = await call('GET', '/v1/events?limit=100', { key: KEYS.payRead });
    expect(new Set(events.body.data.map((e: { type: string }) => e.type.split('.')[0]))).toEqual(
      new Set(['payment']),
    );
    await call('DELETE', `/v1/webhook-endpoints/${endpoint.id}`);
  });
});
