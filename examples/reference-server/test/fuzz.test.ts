import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './api-harness';

// SPEC section 7 and the developers' guide: a 500 from any input a client can send is a bug,
// and every error is problem+json carrying the request's id. Random methods, paths, query
// strings, headers and bodies, sent with a valid key over real HTTP.

const KEY = 'hf_test_fuzzfuzzfuzzfuzzfuzz0001';
const RECEIVER_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
let server: TestServer;
const existing = { order: '', card: '', subscription: '', endpoint: '' };

beforeAll(async () => {
  server = await startTestServer({
    HOLDFAST_API_KEYS: JSON.stringify([{ key: KEY, account: 'acct_fuzz', scopes: ['*'] }]),
    HOLDFAST_RATE_LIMIT: '100000/1s',
    HOLDFAST_RECEIVER_SECRETS: JSON.stringify({
      fuzz: { account: 'acct_fuzz', secrets: [RECEIVER_SECRET] },
    }),
    HOLDFAST_ADDRESS_RATE_LIMIT: '100000/1s',
  });
  // Real resources for the write endpoints that take an id.
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${KEY}`,
        'content-type': 'application/json',
        'idempotency-key': path,
      },
      body: JSON.stringify(body),
    });
    return (await response.json()) as { id: string };
  };
  existing.order = (await post('/v1/orders', { currency: 'EUR', total: 5000 })).id;
  existing.card = (
    await post('/v1/payment-methods', {
      type: 'card',
      card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 },
    })
  ).id;
  existing.subscription = (await post('/v1/subscriptions', { plan: 'pro', paymentMethod: existing.card })).id;
  existing.endpoint = (
    await post('/v1/webhook-endpoints', { url: 'https://example.com/h', eventTypes: ['*'] })
  ).id;
});
afterAll(async () => {
  await server?.stop();
});

const ids = fc.oneof(
  fc.constantFrom(
    'ord_x',
    'pay_1',
    'pm_%00',
    're_',
    `sub_${'a'.repeat(300)}`,
    '..',
    '%2e%2e',
    '0',
    '-1',
    'null',
    '%ff',
  ),
  fc.stringMatching(/^[a-z]{1,4}_[A-Za-z0-9_-]{0,30}$/),
  fc.string({ maxLength: 20 }).map(encodeURIComponent),
);
const collections = [
  'orders',
  'payments',
  'payment-methods',
  'subscriptions',
  'webhook-endpoints',
  'events',
  'deliveries',
  'notifications',
  'inbound-events',
];
const path = fc.oneof(
  fc.constantFrom(...collections).map((c) => `/v1/${c}`),
  fc.tuple(fc.constantFrom(...collections), ids).map(([c, id]) => `/v1/${c}/${id}`),
  fc
    .tuple(
      fc.constantFrom(...collections),
      ids,
      fc.constantFrom('cancel', 'refunds', 'attempts', 'replay', 'rotate-secret', 'x'),
    )
    .map(([c, id, action]) => `/v1/${c}/${id}/${action}`),
  fc.constantFrom(
    '/healthz',
    '/openapi.json',
    '/docs',
    '/problems/invalid_sort',
    '/problems/%00',
    '/hooks/fuzz',
    '/hooks/none',
    '/dashboard',
    '/v2/orders',
    '/',
  ),
  fc.webPath(),
);
const queryValue = fc.oneof(
  fc.constantFrom(
    '',
    '-createdAt',
    'total,-status',
    'a,b,c,d',
    '--x',
    'total,total',
    '0',
    '-5',
    '1e9',
    'NaN',
    '101',
    'total',
    'eyJ9',
    '%00',
    'pending',
  ),
  fc.string({ maxLength: 30 }),
  fc.base64String({ maxLength: 120 }),
);
const query = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom('limit', 'cursor', 'sort', 'include', 'status', 'endpoint', 'eventType', 'order'),
        fc.string({ maxLength: 8 }),
      ),
      queryValue,
    ),
    { maxLength: 4 },
  )
  .map((pairs) => (pairs.length === 0 ? '' : `?${new URLSearchParams(pairs).toString()}`));
const jsonValue = fc.jsonValue({ maxDepth: 4 });
const body = fc.oneof(
  fc.constant(undefined),
  jsonValue.map((v) => JSON.stringify(v)),
  fc
    .record(
      {
        total: fc.oneof(fc.integer(), fc.double(), fc.constant(2 ** 60), fc.string()),
        amount: fc.oneof(fc.integer({ min: -10, max: 10 ** 7 }), fc.constant(2 ** 53 + 2), fc.string()),
        currency: fc.constantFrom('EUR', 'eur', 'XXX', 'ZZZ', '', 'EURO'),
        paymentMethod: ids,
        plan: fc.string({ maxLength: 80 }),
        quantity: fc.oneof(fc.integer(), fc.double()),
        status: fc.constantFrom('pending', 'shipped', 'cancelled', 'active', 'disabled', 'x'),
        url: fc.constantFrom(
          'https://example.com/h',
          'http://127.0.0.1/x',
          'http://[::1]/',
          'http://0x7f000001/',
          'notaurl',
          'https://10.0.0.1/',
        ),
        eventTypes: fc.array(fc.string({ maxLength: 12 }), { maxLength: 3 }),
        metadata: fc.dictionary(
          fc.string({ maxLength: 50 }),
          fc.oneof(fc.string({ maxLength: 600 }), fc.integer()),
        ),
        description: fc.string({ maxLength: 600 }),
        type: fc.constantFrom('card', 'bank'),
        card: fc.record({
          brand: fc.string(),
          last4: fc.string(),
          expMonth: fc.integer(),
          expYear: fc.integer(),
        }),
        order: ids,
      },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
  // Nesting from shallow to far past any recursive walker's stack (about 10,000 levels).
  fc
    .tuple(
      fc.integer({ min: 1, max: 200_000 }),
      fc.constantFrom('[]', '{"a":}'),
      fc.constantFrom('metadata', 'card'),
    )
    .map(([depth, pair, field]) => {
      const [open, close] = pair === '[]' ? ['[', ']'] : ['{"a":', '}'];
      return `{"${field}":${open.repeat(depth)}1${close.repeat(depth)}}`;
    }),
  fc.constantFrom(
    '{"amount":9007199254740993,"currency":"EUR"}',
    '{',
    '[]',
    'null',
    '"x"',
    '{"a":1}{',
    '\u0000',
    '{"__proto__":{"x":1}}',
    'x'.repeat(2000),
  ),
);
const headers = fc.record(
  {
    'content-type': fc.constantFrom(
      'application/json',
      'text/plain',
      'application/json; charset=latin1',
      'application/merge-patch+json',
      '',
    ),
    'idempotency-key': fc.oneof(
      fc.string({ maxLength: 10 }),
      fc.constant('"quoted"'),
      fc.constant('k'.repeat(300)),
    ),
    'if-match': fc.constantFrom('"x"', '*', 'W/"1"', ''),
    'webhook-id': fc.string({ maxLength: 10 }),
    'webhook-timestamp': fc.constantFrom(
      '0',
      '1700000000xyz',
      String(Math.floor(Date.now() / 1000)),
      '-1',
      '',
    ),
    'webhook-signature': fc.constantFrom('v1,AAAA', 'v1a,x', '', `v1,${'A'.repeat(44)}`),
    accept: fc.constantFrom('application/json', 'text/html', '*/*'),
  },
  { requiredKeys: [] },
);
const method = fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS');

describe('fuzz: random requests with a valid key', () => {
  it('never answer 5xx, and every error is problem+json with its Request-Id', async () => {
    await fc.assert(
      fc.asyncProperty(method, path, query, headers, body, async (m, p, q, h, b) => {
        const init: RequestInit = {
          method: m,
          headers: { authorization: `Bearer ${KEY}`, ...h },
          ...(b !== undefined && m !== 'GET' && m !== 'HEAD' ? { body: b } : {}),
        };
        // What fetch refuses to build (a URL it cannot parse, a header value that is not a
        // byte string) never reaches the server: only that is skipped. Every request built here
        // is well-framed HTTP (fetch frames it), so none has a close for its documented answer:
        // once sent, a reset or closed socket, or a body cut short, fails the property.
        let request: Request;
        try {
          request = new Request(`${server.url}${p}${q}`, init);
        } catch (error) {
          if (error instanceof TypeError) return;
          throw error;
        }
        let response: Response;
        let text: string;
        try {
          response = await fetch(request);
          text = await response.text();
        } catch (error) {
          const cause =
            error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
          throw new Error(
            `${m} ${p}${q}: no whole answer, the connection dropped (${String(error)}${cause})`,
          );
        }
        const context = `${m} ${p}${q} -> ${response.status} ${text.slice(0, 300)}`;
        expect(response.status, context).toBeLessThan(500);
        const requestId = response.headers.get('request-id');
        expect(requestId, context).toMatch(/^req_/);
        if (response.status >= 400 && m !== 'HEAD') {
          expect(response.headers.get('content-type'), context).toBe('application/problem+json');
          const problem = JSON.parse(text);
          expect(problem.requestId, context).toBe(requestId);
          expect(typeof problem.code, context).toBe('string');
          expect(problem.status, context).toBe(response.status);
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 400) },
    );
  }, 120_000);
});

// CONTRACT section 10: hostile values in every string and number position of every write
// endpoint (lone surrogates, U+0000, huge and negative numbers, __proto__ and constructor keys),
// and signed inbound events carrying the same. FUZZ_RUNS=2000 on PostgreSQL for the issue's run.
const hostileString = fc.oneof(
  fc.constantFrom('\ud800', 'a\udfffb', '\udc00\ud800', 'x\u0000', '\u0000', '\ufffe', 'é\u0301', ''),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 3 }).map((s) => s.repeat(2000)),
);
const hostileNumber = fc.oneof(
  fc.constantFrom(1e308, -1e308, -1, -0, 2 ** 53, 2 ** 64, -(2 ** 63), 1e-7, Number.MAX_SAFE_INTEGER + 2),
  fc.double({ noNaN: true }),
  fc.integer(),
);
const hostileKey = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', '\u0000', '\ud800', ''),
  fc.string(),
);
const hostile = fc.oneof(hostileString, hostileNumber, fc.constant(null), fc.boolean());
const hostileMetadata = fc.dictionary(hostileKey, fc.oneof(hostileString, hostileNumber), { maxKeys: 4 });

/** Each write endpoint with a template body whose every leaf the fuzz may replace. */
const writes: ReadonlyArray<{ method: string; path: () => string; body: Record<string, unknown> }> = [
  {
    method: 'POST',
    path: () => '/v1/orders',
    body: { currency: 'EUR', total: 100, description: 'd', metadata: { a: 'b' } },
  },
  {
    method: 'PATCH',
    path: () => `/v1/orders/${existing.order}`,
    body: { status: 'shipped', description: 'd', metadata: { a: 'b' } },
  },
  { method: 'POST', path: () => `/v1/orders/${existing.order}/refunds`, body: { amount: 1, reason: 'r' } },
  { method: 'POST', path: () => `/v1/orders/${existing.order}/cancel`, body: {} },
  {
    method: 'POST',
    path: () => '/v1/payments',
    body: { amount: 100, currency: 'EUR', paymentMethod: existing.card, order: existing.order },
  },
  {
    method: 'POST',
    path: () => '/v1/payment-methods',
    body: { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 } },
  },
  {
    method: 'POST',
    path: () => '/v1/subscriptions',
    body: { plan: 'pro', paymentMethod: existing.card, quantity: 1, metadata: { a: 'b' } },
  },
  {
    method: 'PATCH',
    path: () => `/v1/subscriptions/${existing.subscription}`,
    body: { plan: 'pro', quantity: 2, metadata: { a: 'b' } },
  },
  { method: 'POST', path: () => `/v1/subscriptions/${existing.subscription}/cancel`, body: {} },
  {
    method: 'POST',
    path: () => '/v1/webhook-endpoints',
    body: { url: 'https://example.com/h', eventTypes: ['order.created'], description: 'd' },
  },
  {
    method: 'PATCH',
    path: () => `/v1/webhook-endpoints/${existing.endpoint}`,
    body: { url: 'https://example.com/h2', eventTypes: ['*'], description: 'd', status: 'active' },
  },
  { method: 'POST', path: () => `/v1/webhook-endpoints/${existing.endpoint}/rotate-secret`, body: {} },
];

/** `value` with some of its leaves (and maybe an extra key per object) replaced by hostile ones. */
function corrupt(value: unknown, draw: () => number, pick: <T>(a: fc.Arbitrary<T>) => T): unknown {
  if (Array.isArray(value)) return value.map((v) => corrupt(v, draw, pick));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = key === 'metadata' && draw() < 0.3 ? pick(hostileMetadata) : corrupt(item, draw, pick);
    }
    if (draw() < 0.15)
      Object.defineProperty(out, pick(hostileKey), { value: pick(hostile), enumerable: true });
    return out;
  }
  if (draw() < 0.35) return typeof value === 'number' ? pick(hostileNumber) : pick(hostile);
  return value;
}

function sign(id: string, at: number, body: string): string {
  const key = Buffer.from(RECEIVER_SECRET.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${at}.${body}`).digest('base64')}`;
}

describe('fuzz: hostile values in every write endpoint and in signed inbound events', () => {
  const check = async (response: Response, context: string) => {
    const text = await response.text();
    expect(response.status, `${context} -> ${response.status} ${text.slice(0, 300)}`).toBeLessThan(500);
    if (response.status >= 400) expect(response.headers.get('content-type')).toBe('application/problem+json');
  };

  it('never answer 5xx to a write endpoint', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...writes),
        fc.infiniteStream(fc.double({ min: 0, max: 1, noNaN: true })),
        fc.gen(),
        async (write, stream, g) => {
          const numbers = stream[Symbol.iterator]();
          const body = JSON.stringify(
            corrupt(
              write.body,
              () => numbers.next().value ?? 1,
              (a) => g(() => a),
            ),
          );
          const response = await fetch(`${server.url}${write.path()}`, {
            method: write.method,
            headers: {
              authorization: `Bearer ${KEY}`,
              'content-type': 'application/json',
              'idempotency-key': `fuzz-${Math.random()}`,
            },
            body,
          });
          await check(response, `${write.method} ${write.path()} ${body.slice(0, 300)}`);
        },
      ),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 200) },
    );
  }, 300_000);

  it('acknowledges (2xx) or refuses with 4xx every correctly signed inbound event, never 5xx', async () => {
    const payload = fc.record({
      id: hostileString,
      type: fc.oneof(
        fc.constantFrom('order.updated', 'subscription.updated', 'payment.succeeded'),
        hostileString,
      ),
      sequence: hostileNumber,
      data: fc.record({ object: fc.dictionary(hostileKey, hostile, { maxKeys: 5 }) }),
    });
    await fc.assert(
      fc.asyncProperty(payload, fc.string({ minLength: 1, maxLength: 40 }), async (event, suffix) => {
        const body = JSON.stringify(event);
        const id = `msg_${suffix.replace(/[^A-Za-z0-9]/g, 'x')}_${Math.random().toString(36).slice(2)}`;
        const at = Math.floor(Date.now() / 1000);
        const response = await fetch(`${server.url}/hooks/fuzz`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'webhook-id': id,
            'webhook-timestamp': String(at),
            'webhook-signature': sign(id, at, body),
          },
          body,
        });
        await check(response, `/hooks/fuzz ${body.slice(0, 300)}`);
        expect(response.status, body.slice(0, 300)).toBe(200);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 200) },
    );
  }, 300_000);
});
