import { tenantOf } from '@holdfast/api-keys';
import { fromPostgres, postgresTransaction } from '@holdfast/db/postgres';
import { listenFastify, listenHono, listenNode, type RunningDoor } from '@holdfast/node-bridge/testing';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { migrations as deliveryMigrations } from '@holdfast/webhook-delivery';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookManagement as expressDoor } from '../src/express';
import { webhookManagement as fastifyDoor } from '../src/fastify';
import { mountWebhookManagement } from '../src/hono';
import { migrations, type PortalCaller, type WebhookManagementApi, webhookManagementApi } from '../src/index';

// The management API through its Fetch handler, on real storage: who may call (401), whose data
// a caller reaches (another account's ids are 404, test and live are two accounts), what a
// read-only caller may not do (403 on every write), and each door serving it under a prefix.

const EVENT_TYPES = {
  'order.created': ['orders:read'],
  'order.paid': ['orders:read'],
  'payment.failed': ['payments:read'],
} as const;

/** Callers by bearer token: the adopter's own auth, as `authorize` sees it. */
const CALLERS: Record<string, PortalCaller> = {
  alice: { account: tenantOf('acct_alice', 'test'), livemode: false, scopes: new Set(['*']) },
  aliceLive: { account: tenantOf('acct_alice', 'live'), livemode: true, scopes: new Set(['*']) },
  bob: { account: tenantOf('acct_bob', 'test'), livemode: false, scopes: new Set(['*']) },
  aliceReader: {
    account: tenantOf('acct_alice', 'test'),
    livemode: false,
    scopes: new Set(['*']),
    readOnly: true,
  },
  aliceOrders: {
    account: tenantOf('acct_alice', 'test'),
    livemode: false,
    scopes: new Set(['webhooks:write', 'orders:read']),
  },
};

let db: TestDatabase;
let api: WebhookManagementApi;
const BASE = '/webhooks';

beforeAll(async () => {
  db = await createTestDatabase();
  for (const migration of [...deliveryMigrations(), ...migrations()]) await db.sql.unsafe(migration.sql);
  api = webhookManagementApi({
    db: fromPostgres(db.sql),
    transaction: postgresTransaction(db.sql),
    keyring: { current: 'k1', keys: { k1: 'a-cursor-secret-of-at-least-32-bytes!!' } },
    eventTypes: EVENT_TYPES,
    basePath: BASE,
    authorize: (request) => {
      const token = /^Bearer (\w+)$/.exec(request.headers.get('authorization') ?? '')?.[1];
      return token === undefined ? undefined : CALLERS[token];
    },
    destinations: { allowPrivateDestinations: true },
    pages: async (request) =>
      new URL(request.url).pathname === `${BASE}/portal`
        ? new Response('the portal', { status: 200 })
        : undefined,
  });
});

afterAll(async () => {
  await db?.close();
});

function call(
  who: string | undefined,
  method: string,
  path: string,
  body?: unknown,
  handler: (request: Request) => Promise<Response> = api,
): Promise<Response> {
  const headers = new Headers();
  if (who) headers.set('authorization', `Bearer ${who}`);
  if (body !== undefined) headers.set('content-type', 'application/json');
  return handler(
    new Request(`http://localhost${BASE}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
  );
}

async function createEndpoint(who: string, fields: Record<string, unknown> = {}): Promise<{ id: string }> {
  const response = await call(who, 'POST', '/webhook-endpoints', {
    url: 'http://127.0.0.1:4000/hooks',
    eventTypes: ['order.created'],
    ...fields,
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string };
}

describe('who may call', () => {
  it('answers 401 problem+json when authorize answers no caller', async () => {
    for (const who of [undefined, 'nobody']) {
      const response = await call(who, 'GET', '/webhook-endpoints');
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      expect(response.headers.get('www-authenticate')).toContain('Bearer');
      expect(((await response.json()) as { code: string }).code).toBe('unauthenticated');
    }
  });

  it('answers 404 problem+json for a path it does not serve, and hands its pages to `pages`', async () => {
    const missing = await call('alice', 'GET', '/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('application/problem+json');
    const page = await call(undefined, 'GET', '/portal');
    expect(page.status).toBe(200);
    expect(await page.text()).toBe('the portal');
  });
});

describe('whose data a caller reaches', () => {
  it('creates an endpoint with Location under the base path and the secret once', async () => {
    const response = await call('alice', 'POST', '/webhook-endpoints', {
      url: 'http://127.0.0.1:4000/hooks',
      eventTypes: ['order.created'],
    });
    expect(response.status).toBe(201);
    const created = (await response.json()) as { id: string; secret?: string; livemode: boolean };
    expect(response.headers.get('location')).toBe(`${BASE}/webhook-endpoints/${created.id}`);
    expect(created.secret).toMatch(/^whsec_/);
    expect(created.livemode).toBe(false);
    const fetched = (await (await call('alice', 'GET', `/webhook-endpoints/${created.id}`)).json()) as {
      secret?: string;
    };
    expect(fetched.secret).toBeUndefined();
  });

  it("answers 404 for another account's endpoint and delivery ids, and never lists them", async () => {
    const endpoint = await createEndpoint('alice');
    const test = await call('alice', 'POST', `/webhook-endpoints/${endpoint.id}/test`, {
      eventType: 'order.created',
    });
    expect(test.status).toBe(202);
    const delivery = (await test.json()) as { id: string };
    expect((await call('alice', 'GET', `/deliveries/${delivery.id}`)).status).toBe(200);

    for (const [method, path, body] of [
      ['GET', `/webhook-endpoints/${endpoint.id}`],
      ['PATCH', `/webhook-endpoints/${endpoint.id}`, { description: 'taken' }],
      ['DELETE', `/webhook-endpoints/${endpoint.id}`],
      ['POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`],
      ['POST', `/webhook-endpoints/${endpoint.id}/test`, { eventType: 'order.created' }],
      ['POST', `/webhook-endpoints/${endpoint.id}/recover`, { since: '2020-01-01T00:00:00.000Z' }],
      ['GET', `/webhook-endpoints/${endpoint.id}/stats`],
      ['GET', `/deliveries/${delivery.id}`],
      ['GET', `/deliveries/${delivery.id}/attempts`],
      ['POST', `/deliveries/${delivery.id}/replay`],
    ] as const) {
      const response = await call('bob', method, path, body);
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
    }
    const endpoints = (await (await call('bob', 'GET', '/webhook-endpoints')).json()) as { data: unknown[] };
    expect(endpoints.data).toEqual([]);
    const deliveries = (await (await call('bob', 'GET', '/deliveries')).json()) as { data: unknown[] };
    expect(deliveries.data).toEqual([]);
    const notifications = await call('bob', 'GET', '/notifications');
    expect(notifications.status).toBe(200);
    expect(((await notifications.json()) as { data: unknown[] }).data).toEqual([]);
    // Still there for its owner: nothing bob did reached it.
    expect((await call('alice', 'GET', `/webhook-endpoints/${endpoint.id}`)).status).toBe(200);
  });

  it('keeps test and live apart: the live caller of the same account sees none of its test data', async () => {
    const endpoint = await createEndpoint('alice');
    expect((await call('aliceLive', 'GET', `/webhook-endpoints/${endpoint.id}`)).status).toBe(404);
    const live = await createEndpoint('aliceLive');
    const liveList = (await (await call('aliceLive', 'GET', '/webhook-endpoints')).json()) as {
      data: { id: string; livemode: boolean }[];
    };
    expect(liveList.data.map((row) => row.id)).toEqual([live.id]);
    expect(liveList.data[0]?.livemode).toBe(true);
    expect((await call('alice', 'GET', `/webhook-endpoints/${live.id}`)).status).toBe(404);
  });

  it('refuses with 403 an endpoint carrying event types the caller may not read', async () => {
    const refused = await call('aliceOrders', 'POST', '/webhook-endpoints', {
      url: 'http://127.0.0.1:4000/hooks',
      eventTypes: ['payment.failed'],
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toContain('scope="payments:read"');
    // Every type (absent eventTypes) includes payment.failed: refused too.
    const all = await call('aliceOrders', 'POST', '/webhook-endpoints', {
      url: 'http://127.0.0.1:4000/hooks',
    });
    expect(all.status).toBe(403);
    await createEndpoint('aliceOrders', { eventTypes: ['order.created', 'order.paid'] });
  });

  it('refuses an event type outside the map with 400', async () => {
    const response = await call('alice', 'POST', '/webhook-endpoints', {
      url: 'http://127.0.0.1:4000/hooks',
      eventTypes: ['order.shipped'],
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { code: string }).code).toBe('validation_failed');
  });
});

describe('a read-only caller', () => {
  it('is refused every write with 403, and nothing changes', async () => {
    const endpoint = await createEndpoint('alice');
    const test = await call('alice', 'POST', `/webhook-endpoints/${endpoint.id}/test`, {
      eventType: 'order.created',
    });
    const delivery = (await test.json()) as { id: string };
    const before = await (await call('alice', 'GET', `/webhook-endpoints/${endpoint.id}`)).json();
    const writes = [
      ['POST', '/webhook-endpoints', { url: 'http://127.0.0.1:4000/hooks' }],
      ['PATCH', `/webhook-endpoints/${endpoint.id}`, { status: 'disabled' }],
      ['DELETE', `/webhook-endpoints/${endpoint.id}`],
      ['POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`],
      ['POST', `/webhook-endpoints/${endpoint.id}/test`, { eventType: 'order.created' }],
      ['POST', `/webhook-endpoints/${endpoint.id}/recover`, { since: '2020-01-01T00:00:00.000Z' }],
      ['POST', `/deliveries/${delivery.id}/replay`],
    ] as const;
    for (const [method, path, body] of writes) {
      const response = await call('aliceReader', method, path, body);
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
    }
    expect(await (await call('alice', 'GET', `/webhook-endpoints/${endpoint.id}`)).json()).toEqual(before);
    // Reading is allowed.
    expect((await call('aliceReader', 'GET', `/webhook-endpoints/${endpoint.id}`)).status).toBe(200);
    expect((await call('aliceReader', 'GET', `/deliveries/${delivery.id}/attempts`)).status).toBe(200);
  });
});

describe('its OpenAPI paths', () => {
  it('lists every operation under the base path, with the components they refer to', () => {
    const { paths, components } = api.openapi();
    expect(Object.keys(paths)).toEqual([
      `${BASE}/webhook-endpoints`,
      `${BASE}/webhook-endpoints/{id}`,
      `${BASE}/webhook-endpoints/{id}/rotate-secret`,
      `${BASE}/webhook-endpoints/{id}/test`,
      `${BASE}/webhook-endpoints/{id}/recover`,
      `${BASE}/webhook-endpoints/{id}/stats`,
      `${BASE}/deliveries`,
      `${BASE}/deliveries/{id}`,
      `${BASE}/deliveries/{id}/attempts`,
      `${BASE}/deliveries/{id}/replay`,
      `${BASE}/notifications`,
    ]);
    expect(Object.keys(components.schemas)).toEqual(
      expect.arrayContaining(['WebhookEndpoint', 'Delivery', 'DeliveryAttempt', 'EventType']),
    );
    expect((components.schemas.EventType as { enum: string[] }).enum).toEqual(Object.keys(EVENT_TYPES));
  });
});

describe('each door, under a prefix', () => {
  const doors: Record<string, () => Promise<RunningDoor>> = {
    hono: async () => {
      const app = new Hono();
      mountWebhookManagement(app, api);
      app.get('/host', (c) => c.text('the host'));
      return listenHono(app);
    },
    express: async () => {
      const app = express();
      app.use(expressDoor(api));
      app.get('/host', (_req, res) => {
        res.send('the host');
      });
      return listenNode(app);
    },
    fastify: async () => {
      const app = Fastify();
      await app.register(fastifyDoor(api));
      app.get('/host', async () => 'the host');
      return listenFastify(app);
    },
  };

  for (const [name, start] of Object.entries(doors)) {
    it(`${name}: serves the API under ${BASE} and leaves the host's routes alone`, async () => {
      const door = await start();
      try {
        const headers = { authorization: 'Bearer bob', 'content-type': 'application/json' };
        const created = await fetch(`${door.url}${BASE}/webhook-endpoints`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ url: 'http://127.0.0.1:4000/hooks', eventTypes: ['order.paid'] }),
        });
        expect(created.status).toBe(201);
        const { id } = (await created.json()) as { id: string };
        const listed = await fetch(`${door.url}${BASE}/webhook-endpoints?limit=100`, { headers });
        expect(listed.status).toBe(200);
        expect(((await listed.json()) as { data: { id: string }[] }).data.map((row) => row.id)).toContain(id);
        const anonymous = await fetch(`${door.url}${BASE}/deliveries`);
        expect(anonymous.status).toBe(401);
        expect(anonymous.headers.get('content-type')).toContain('application/problem+json');
        const reader = await fetch(`${door.url}${BASE}/webhook-endpoints/${id}`, {
          method: 'DELETE',
          headers: { authorization: 'Bearer aliceReader' },
        });
        expect(reader.status).toBe(403);
        const deleted = await fetch(`${door.url}${BASE}/webhook-endpoints/${id}`, {
          method: 'DELETE',
          headers,
        });
        expect(deleted.status).toBe(204);
        const host = await fetch(`${door.url}/host`);
        expect(await host.text()).toBe('the host');
      } finally {
        await door.close();
      }
    });
  }
});
