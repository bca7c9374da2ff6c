import { createHmac } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Answer, call, type Loose, startTestServer, type TestServer } from './api-harness';

// CONTRACT section 10 against the findings of the hardening issue, one block per finding, over
// real HTTP (the per-address limits need real source addresses: 127.0.0.x).

const ACCOUNT = 'acct_hard_a';
const KEYS = {
  test: 'hf_test_hardAllScopes000000000000001',
  live: 'hf_live_hardAllScopes000000000000001',
  webhooksRead: 'hf_test_hardWebhooksRead0000000000001',
  webhooksWrite: 'hf_test_hardWebhooksWrite000000000001',
  ordersRead: 'hf_test_hardOrdersRead00000000000001',
} as const;
const SECRET = `whsec_${Buffer.from('holdfast-hardening-test-secret-32').toString('base64')}`;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({
    HOLDFAST_API_KEYS: JSON.stringify([
      { key: KEYS.test, account: ACCOUNT, scopes: ['*'] },
      { key: KEYS.live, account: ACCOUNT, scopes: ['*'] },
      { key: KEYS.webhooksRead, account: ACCOUNT, scopes: ['webhooks:read'] },
      { key: KEYS.webhooksWrite, account: ACCOUNT, scopes: ['webhooks:write'] },
      { key: KEYS.ordersRead, account: ACCOUNT, scopes: ['orders:read', 'webhooks:read'] },
    ]),
    HOLDFAST_RECEIVER_SECRETS: JSON.stringify({
      billing: { account: ACCOUNT, secrets: [SECRET] },
      live: { account: ACCOUNT, mode: 'live', secrets: [SECRET] },
    }),
    HOLDFAST_RATE_LIMIT: '10000/1s',
    HOLDFAST_ADDRESS_RATE_LIMIT: '1/10s:20',
  });
});
afterAll(async () => {
  await t?.stop();
});

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call(t.url, method, path, { key: KEYS.test, ...options });

// Every request of a block from its own source address, so one block's rate limits never touch
// another's (and the per-key limit of 5/s: a fresh key per use where it matters).
const agents = new Map<string, Agent>();
function from(address: string): Agent {
  let agent = agents.get(address);
  if (!agent) {
    agent = new Agent({ localAddress: address, connections: 4 });
    agents.set(address, agent);
  }
  return agent;
}
afterAll(async () => {
  await Promise.all([...agents.values()].map((agent) => agent.close()));
});

async function send(
  address: string,
  method: string,
  path: string,
  options: { key?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  const response = await request(`${t.url}${path}`, {
    method: method as 'GET',
    headers,
    dispatcher: from(address),
    ...(options.body === undefined ? {} : { body: options.body }),
  });
  const text = await response.body.text();
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (typeof value === 'string') responseHeaders.set(name, value);
  }
  return { status: response.statusCode, headers: responseHeaders, body: text ? JSON.parse(text) : {} };
}

/** Signs like a Standard Webhooks sender, written independently of the packages. */
function signed(id: string, body: string) {
  const at = Math.floor(Date.now() / 1000);
  const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
  const signature = `v1,${createHmac('sha256', key).update(`${id}.${at}.${body}`).digest('base64')}`;
  return { 'webhook-id': id, 'webhook-timestamp': String(at), 'webhook-signature': signature };
}

/** The `data` of a list answer. */
function rows(answer: Answer): Loose[] {
  const data: unknown = answer.body.data;
  return Array.isArray(data) ? data : [];
}

let keyed = 0;
/** A request with the all-scopes test key from a fresh loopback address of 127.0.1.x. */
const fresh = () => `127.0.1.${(keyed++ % 250) + 1}`;

describe('1: no text a client sends is a 500', () => {
  it('a lone surrogate in metadata (values and keys) becomes U+FFFD on orders and subscriptions', async () => {
    const order = await api('POST', '/v1/orders', {
      body: '{"currency":"EUR","total":100,"description":"a\\udc00b","metadata":{"k\\ud800":"v\\ud800"}}',
    });
    expect(order.status).toBe(201);
    expect(order.body.metadata).toEqual({ 'k\uFFFD': 'v\uFFFD' });
    expect(order.body.description).toBe('a\uFFFDb');
    const card = await api('POST', '/v1/payment-methods', {
      key: KEYS.test,
      body: { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 } },
    });
    const subscription = await api('POST', '/v1/subscriptions', {
      body: `{"plan":"pro","paymentMethod":"${card.body.id}","metadata":{"a":"\\ud800"}}`,
    });
    expect(subscription.status).toBe(201);
    expect(subscription.body.metadata).toEqual({ a: '\uFFFD' });
  });

  it('U+0000 anywhere in a body is 400 validation_failed naming the field', async () => {
    for (const [body, field] of [
      ['{"currency":"EUR","total":1,"metadata":{"a":"x\\u0000"}}', 'metadata.a'],
      ['{"currency":"EUR","total":1,"metadata":{"a\\u0000":"x"}}', 'metadata.a\u0000'],
      ['{"currency":"EUR","total":1,"description":"\\u0000"}', 'description'],
    ] as const) {
      const answer = await api('POST', '/v1/orders', { body });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('validation_failed');
      expect(answer.body.errors).toEqual([expect.objectContaining({ field, code: 'invalid_characters' })]);
    }
  });

  it('a signed inbound event holding U+0000 or a lone surrogate is acknowledged and kept byte for byte', async () => {
    const body =
      '{"id":"evt_odd","type":"order.updated","data":{"object":{"id":"ord_x","note":"\\u0000\\ud800"}}}';
    const answer = await send(fresh(), 'POST', '/hooks/billing', {
      body,
      headers: signed('msg_odd_1', body),
    });
    expect(answer.status).toBe(200);
    const [row] = await t.server.db.query<{
      body: Uint8Array;
      payload: { data: { object: { note: string } } };
    }>("select body, payload from holdfast_webhook_inbox where webhook_id = 'msg_odd_1'");
    expect(Buffer.from(row?.body ?? []).toString('utf8')).toBe(body);
    expect(row?.payload.data.object.note).toBe('\uFFFD\uFFFD');
  });
});

describe('2: scopes decide which events a key sees or subscribes to', () => {
  it('GET /v1/events shows only events of resources the key may read; others are 404', async () => {
    const order = await api('POST', '/v1/orders', { body: { currency: 'EUR', total: 100 } });
    expect(order.status).toBe(201);
    const all = await api('GET', '/v1/events?limit=100');
    const orderEvent = rows(all).find((e) => String(e.type) === 'order.created');
    if (!orderEvent) throw new Error('no order.created event');
    expect(orderEvent).toBeDefined();

    const webhooksOnly = await api('GET', '/v1/events?limit=100', { key: KEYS.webhooksRead });
    expect(webhooksOnly.status).toBe(200);
    expect(rows(webhooksOnly)).toEqual([]);
    const hidden = await api('GET', `/v1/events/${orderEvent.id}`, { key: KEYS.webhooksRead });
    expect(hidden.status).toBe(404);

    const withOrders = await api('GET', '/v1/events?limit=100', { key: KEYS.ordersRead });
    expect(rows(withOrders).length).toBeGreaterThan(0);
    expect(rows(withOrders).every((e) => String(e.type).startsWith('order.'))).toBe(true);
    expect((await api('GET', `/v1/events/${orderEvent.id}`, { key: KEYS.ordersRead })).status).toBe(200);
  });

  it('subscribing to a type (or *) needs the read scope of what it carries: 403 insufficient_scope', async () => {
    for (const eventTypes of [['payment.succeeded'], ['*'], ['order.created']]) {
      const answer = await api('POST', '/v1/webhook-endpoints', {
        key: KEYS.webhooksWrite,
        body: { url: 'https://hooks.example.com/in', eventTypes },
      });
      expect(answer.status).toBe(403);
      expect(answer.body.code).toBe('forbidden');
      expect(answer.headers.get('www-authenticate')).toMatch(/error="insufficient_scope", scope="\w+:read"/);
    }
  });

  it('an unknown /v1 path is refused before any handler', async () => {
    const answer = await api('GET', '/v1/not-a-resource');
    expect(answer.status).toBe(404);
    expect(answer.body.code).toBe('not_found');
    // Refused before the body guard and any handler: a body that the JSON guard would refuse
    // (415, 400) is never read on a path that names no resource family.
    for (const [type, body] of [
      ['text/plain', 'x'],
      ['application/json', '{"a":'],
    ] as const) {
      const refused = await api('POST', '/v1/not-a-resource', { body, headers: { 'content-type': type } });
      expect(refused.status).toBe(404);
      expect(refused.body.code).toBe('not_found');
    }
  });
});

describe('3: test and live keys see disjoint data', () => {
  it('a live key never sees, replays or finds what a test key made, and every resource says its mode', async () => {
    const card = (key: string) =>
      api('POST', '/v1/payment-methods', {
        key,
        body: { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 } },
      });
    const testCard = await card(KEYS.test);
    const liveCard = await card(KEYS.live);
    expect(testCard.body.livemode).toBe(false);
    expect(liveCard.body.livemode).toBe(true);
    const pay = (key: string, paymentMethod: string) =>
      api('POST', '/v1/payments', {
        key,
        body: { amount: 500, currency: 'EUR', paymentMethod },
        headers: { 'idempotency-key': 'same-key-both-modes' },
      });
    const testPayment = await pay(KEYS.test, String(testCard.body.id));
    expect(testPayment.status).toBe(201);
    const livePayment = await pay(KEYS.live, String(liveCard.body.id));
    expect(livePayment.status).toBe(201);
    expect(livePayment.headers.get('idempotent-replayed')).toBeNull();
    expect(livePayment.body.id).not.toBe(testPayment.body.id);
    expect(livePayment.body.livemode).toBe(true);

    expect((await api('GET', `/v1/payments/${testPayment.body.id}`, { key: KEYS.live })).status).toBe(404);
    expect((await api('GET', `/v1/payment-methods/${testCard.body.id}`, { key: KEYS.live })).status).toBe(
      404,
    );
    const livePayments = await api('GET', '/v1/payments?limit=100', { key: KEYS.live });
    expect(rows(livePayments).map((p) => p.id)).toEqual([livePayment.body.id]);
    const liveEvents = await api('GET', '/v1/events?limit=100', { key: KEYS.live });
    expect(rows(liveEvents).every((e) => String(e.livemode) === 'true')).toBe(true);
    expect(rows(liveEvents).every((e) => String(e.data?.object?.livemode) === 'true')).toBe(true);
  });
});

describe('4 and 5: floods are limited per address, before the database and before signatures', () => {
  it('made-up keys from one address get 429 after the burst; other addresses and valid keys are untouched', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) {
      const answer = await send('127.0.0.2', 'GET', '/v1/orders', {
        key: `hf_test_madeUp${String(i).padStart(24, '0')}`,
      });
      statuses.push(answer.status);
      if (answer.status === 429) expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses.slice(20)).toEqual(Array(40).fill(429));
    // Another address, and a valid key, are not limited by that flood.
    expect(
      (await send('127.0.0.3', 'GET', '/v1/orders', { key: 'hf_test_madeUp000000000000000000000000' }))
        .status,
    ).toBe(401);
    expect((await send('127.0.0.4', 'GET', '/v1/orders', { key: KEYS.ordersRead })).status).toBe(200);
  });

  it("a flood of bad signatures from one address never makes another address's genuine deliveries fail", async () => {
    const flood = await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        send('127.0.0.5', 'POST', '/hooks/billing', {
          body: '{}',
          headers: { ...signed(`msg_bad_${i}`, '{}'), 'webhook-signature': 'v1,AAAA' },
        }),
      ),
    );
    expect(flood.filter((a) => a.status === 429).length).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) {
      const body = `{"id":"evt_ok_${i}","type":"order.updated","data":{"object":{"id":"ord_${i}"}}}`;
      const answer = await send('127.0.0.6', 'POST', '/hooks/billing', {
        body,
        headers: signed(`msg_ok_${i}`, body),
      });
      expect(answer.status).toBe(200);
    }
  });

  it('the per-receiver limit counts verified deliveries only, and its 429 speaks of the receiver', async () => {
    const small = await startTestServer({
      HOLDFAST_RATE_LIMIT: '1/10s:3',
      HOLDFAST_RECEIVER_SECRETS: JSON.stringify({ billing: { account: ACCOUNT, secrets: [SECRET] } }),
    });
    try {
      const post = (id: string, signature?: string) => {
        const body = `{"id":"${id}","type":"order.updated","data":{"object":{"id":"ord_r"}}}`;
        const headers = signed(id, body);
        if (signature) headers['webhook-signature'] = signature;
        return call(small.url, 'POST', '/hooks/billing', { key: null, body, headers });
      };
      // Badly signed deliveries do not spend the receiver's tokens ...
      for (let i = 0; i < 10; i++) expect((await post(`msg_x_${i}`, 'v1,AAAA')).status).toBe(401);
      // ... so the burst of 3 is all there for genuine ones, and the 4th is limited.
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push(await post(`msg_r_${i}`));
      expect(statuses.map((a) => a.status)).toEqual([200, 200, 200, 429]);
      expect(statuses[3]?.body.detail).toMatch(/^This receiver may make 1 requests per 10 s/);
    } finally {
      await small.stop();
    }
  });

  it('keeps a bounded number of buckets however many addresses or names a flood invents', async () => {
    const { memoryStore, rateLimiter } = await import('@holdfast/rate-limit');
    const store = memoryStore({ now: () => 0 });
    const limiter = rateLimiter({ limit: 1, windowMs: 1000, burst: 1 }, { store, subject: 'This address' });
    for (let i = 0; i < 36_000; i++) await limiter.spend(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`);
    expect(store.size).toBe(10_000); // memoryStore()'s default maxBuckets
  });
});

describe('6 and 7: destinations', () => {
  it('refuses IPv4-compatible IPv6 and names the rule, never a resolved address', async () => {
    const production = await startTestServer({
      NODE_ENV: 'production',
      HOLDFAST_CURSOR_SECRET: 'x'.repeat(32),
    });
    const register = (url: string) =>
      call(production.url, 'POST', '/v1/webhook-endpoints', { body: { url, eventTypes: ['order.created'] } });
    try {
      for (const url of [
        'https://[::169.254.169.254]/x',
        'https://[::ffff:0:a9fe:a9fe]/x',
        'https://[2002:a9fe:a9fe::1]/x',
      ]) {
        const answer = await register(url);
        expect(answer.status, url).toBe(422);
        expect(answer.body.code).toBe('destination_url_forbidden');
      }
      // This machine's own name resolves to a loopback address (Debian's /etc/hosts): the
      // refusal says "not a public address", never the address or its range. (The package's table covers this with a
      // resolver of its own on every machine.)
      const name = hostname();
      const addresses = await lookup(name, { all: true }).catch(() => []);
      if (addresses.length > 0 && addresses.every((a) => a.address.startsWith('127.'))) {
        const internal = await register(`https://${name}/h`);
        expect(internal.status).toBe(422);
        for (const { address } of addresses) expect(JSON.stringify(internal.body)).not.toContain(address);
        expect(internal.body.detail).toMatch(/resolves to an address that is not a public address/);
        expect(JSON.stringify(internal.body)).not.toMatch(/loopback range|127\.0\.0\.0/);
      }
    } finally {
      await production.stop();
    }
  });
});

describe('9: the smaller findings', () => {
  it('a webhook-id over 255 characters is 400 and not stored', async () => {
    const id = 'x'.repeat(5000);
    const body = '{"id":"evt_long","type":"order.updated","data":{"object":{}}}';
    const answer = await send(fresh(), 'POST', '/hooks/billing', { body, headers: signed(id, body) });
    expect(answer.status).toBe(400);
    const [row] = await t.server.db.query<{ n: number }>(
      'select count(*)::int as n from holdfast_webhook_inbox where length(webhook_id) > 255',
    );
    expect(row?.n).toBe(0);
  });

  it('endpoint URLs are stored and echoed WHATWG-normalised', async () => {
    const answer = await api('POST', '/v1/webhook-endpoints', {
      body: { url: ' HTTPS://Hooks.EXAMPLE.com:443/a/../in', eventTypes: ['order.created'] },
    });
    expect(answer.status).toBe(201);
    expect(answer.body.url).toBe('https://hooks.example.com/in');
  });

  it('a __proto__ metadata key is 400 naming it, not silently dropped', async () => {
    const answer = await api('POST', '/v1/orders', {
      body: '{"currency":"EUR","total":1,"metadata":{"__proto__":"x","a":"b"}}',
    });
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual([expect.objectContaining({ field: 'metadata.__proto__' })]);
  });
});
