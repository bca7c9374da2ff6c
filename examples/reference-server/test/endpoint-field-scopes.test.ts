import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT,
  type ApiResponse,
  api,
  type Receiver,
  startReceiver,
  startTestServer,
  type TestServer,
} from './webhooks-harness';

// CONTRACT section 12, "Scopes on every endpoint field": any change to a webhook endpoint, of any
// field, disabling and deleting included, needs the read scope of every event type it carries.
// Before, a key with webhooks:write but not payments:read could change the filter, the ordering
// and the rate of an endpoint carrying payment events.

const KEYS = {
  all: 'hf_test_fieldScopesAllScopes000000001',
  ordersWrite: 'hf_test_fieldScopesHooksOrders0000001',
  paymentsWrite: 'hf_test_fieldScopesHooksPayments00001',
} as const;

const API_KEYS = JSON.stringify([
  { key: KEYS.all, account: ACCOUNT, scopes: ['*'] },
  { key: KEYS.ordersWrite, account: ACCOUNT, scopes: ['webhooks:write', 'webhooks:read', 'orders:read'] },
  {
    key: KEYS.paymentsWrite,
    account: ACCOUNT,
    scopes: ['webhooks:write', 'webhooks:read', 'orders:read', 'payments:read'],
  },
]);

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startTestServer({ HOLDFAST_API_KEYS: API_KEYS });
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

async function createEndpoint(body: Record<string, unknown>): Promise<string> {
  const response = await call('POST', '/v1/webhook-endpoints', { body: { url: receiver.url, ...body } });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.id;
}

const read = async (id: string) => {
  const response = await call('GET', `/v1/webhook-endpoints/${id}`);
  expect(response.status).toBe(200);
  return response.body;
};

// One change of each field an endpoint has, from a disabled endpoint where enabling is a change.
const CHANGES: [string, Record<string, unknown>][] = [
  ['filter', { filter: { 'data.object.amount': { $gt: 0 } } }],
  ['filter: null', { filter: null }],
  ['ordering', { ordering: 'per-resource' }],
  ['maxPerSecond', { maxPerSecond: 5 }],
  ['maxPerSecond: null', { maxPerSecond: null }],
  ['description', { description: 'ops' }],
  ['description: null', { description: null }],
  ['status: disabled', { status: 'disabled' }],
  ['status: active', { status: 'active' }],
  ['url', { url: 'http://127.0.0.1:1024/elsewhere' }],
  ['eventTypes, narrowing to what the key reads', { eventTypes: ['order.created'] }],
  ['nothing (an empty change)', {}],
];

describe('a key without the read scope of a carried type', () => {
  it.each(CHANGES)(
    'changing %s is 403 insufficient_scope, and the endpoint is unchanged',
    async (_field, body) => {
      const id = await createEndpoint({
        eventTypes: ['payment.succeeded', 'order.created'],
        filter: { type: 'payment.succeeded' },
        maxPerSecond: 10,
        description: 'payments',
      });
      // A second state to start from, so that enabling is a change too.
      const start = body.status === 'active' ? 'disabled' : 'active';
      if (start === 'disabled')
        expect(
          (await call('PATCH', `/v1/webhook-endpoints/${id}`, { body: { status: 'disabled' } })).status,
        ).toBe(200);
      const before = await read(id);
      expectScopeRefusal(
        await call('PATCH', `/v1/webhook-endpoints/${id}`, { key: KEYS.ordersWrite, body }),
        'payments:read',
      );
      expect(await read(id)).toEqual(before);

      // The same change by a key that reads every type the endpoint carries goes through.
      const allowed = await call('PATCH', `/v1/webhook-endpoints/${id}`, { key: KEYS.paymentsWrite, body });
      expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
      expect((await call('DELETE', `/v1/webhook-endpoints/${id}`)).status).toBe(204);
    },
  );

  it('deleting is 403 insufficient_scope, and the endpoint stays', async () => {
    const id = await createEndpoint({ eventTypes: ['payment.succeeded'] });
    const before = await read(id);
    expectScopeRefusal(
      await call('DELETE', `/v1/webhook-endpoints/${id}`, { key: KEYS.ordersWrite }),
      'payments:read',
    );
    expect(await read(id)).toEqual(before);
    expect((await call('DELETE', `/v1/webhook-endpoints/${id}`, { key: KEYS.paymentsWrite })).status).toBe(
      204,
    );
    expect((await call('GET', `/v1/webhook-endpoints/${id}`)).status).toBe(404);
  });

  it('an endpoint carrying every type (eventTypes absent) needs every read scope', async () => {
    const id = await createEndpoint({});
    const before = await read(id);
    expectScopeRefusal(
      await call('PATCH', `/v1/webhook-endpoints/${id}`, {
        key: KEYS.paymentsWrite,
        body: { maxPerSecond: 1 },
      }),
      'subscriptions:read',
    );
    expectScopeRefusal(
      await call('DELETE', `/v1/webhook-endpoints/${id}`, { key: KEYS.paymentsWrite }),
      'subscriptions:read',
    );
    expect(await read(id)).toEqual(before);
    expect((await call('DELETE', `/v1/webhook-endpoints/${id}`)).status).toBe(204);
  });

  it('widening to a type the key cannot read is refused, judged on the types after the change', async () => {
    const id = await createEndpoint({ eventTypes: ['order.created'] });
    const before = await read(id);
    expectScopeRefusal(
      await call('PATCH', `/v1/webhook-endpoints/${id}`, {
        key: KEYS.ordersWrite,
        body: { eventTypes: ['order.created', 'payment.succeeded'] },
      }),
      'payments:read',
    );
    expect(await read(id)).toEqual(before);
    await call('DELETE', `/v1/webhook-endpoints/${id}`);
  });
});

describe('a key that reads every carried type', () => {
  it.each(CHANGES)('changes %s of an order endpoint, and deletes it', async (_field, body) => {
    const id = await createEndpoint({ eventTypes: ['order.created', 'order.updated'] });
    if (body.status === 'active')
      expect(
        (await call('PATCH', `/v1/webhook-endpoints/${id}`, { body: { status: 'disabled' } })).status,
      ).toBe(200);
    const changed = await call('PATCH', `/v1/webhook-endpoints/${id}`, { key: KEYS.ordersWrite, body });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    for (const [field, value] of Object.entries(body)) expect(changed.body[field], field).toEqual(value);
    expect((await call('DELETE', `/v1/webhook-endpoints/${id}`, { key: KEYS.ordersWrite })).status).toBe(204);
  });

  it('an absent endpoint is 404 whatever the key reads (no scope is checked against nothing)', async () => {
    for (const key of [KEYS.ordersWrite, KEYS.all]) {
      expect(
        (await call('PATCH', '/v1/webhook-endpoints/we_absent', { key, body: { description: 'x' } })).status,
      ).toBe(404);
      expect((await call('DELETE', '/v1/webhook-endpoints/we_absent', { key })).status).toBe(404);
    }
  });
});
