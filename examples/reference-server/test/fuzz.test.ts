import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../src/server';

// SPEC section 7 and the developers' guide: a 500 from any input a client can send is a bug,
// and every error is problem+json carrying the request's id. Random methods, paths, query
// strings, headers and bodies, sent with a valid key over real HTTP.

const KEY = 'hf_test_fuzzfuzzfuzzfuzzfuzz0001';
let server: RunningServer;

beforeAll(async () => {
  server = await startServer({
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      NODE_ENV: 'test',
      HOLDFAST_DATA_DIR: 'memory://',
      HOLDFAST_API_KEYS: JSON.stringify([{ key: KEY, account: 'acct_fuzz', scopes: ['*'] }]),
      HOLDFAST_RATE_LIMIT: '100000/1s',
      HOLDFAST_RECEIVER_SECRETS: JSON.stringify({
        fuzz: { account: 'acct_fuzz', secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] },
      }),
    },
  });
});
afterAll(async () => {
  await server?.close();
});

const ids = fc.oneof(
  fc.constantFrom(
    'ord_x',
    'pay_1',
    'pm_%00',
    're_',
    'sub_' + 'a'.repeat(300),
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
    'webhook-signature': fc.constantFrom('v1,AAAA', 'v1a,x', '', 'v1,' + 'A'.repeat(44)),
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
        let response: Response;
        try {
          response = await fetch(`${server.url}${p}${q}`, init);
        } catch (error) {
          // A URL that fetch itself refuses to send never reached the server.
          if (error instanceof TypeError) return;
          throw error;
        }
        const text = await response.text();
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
