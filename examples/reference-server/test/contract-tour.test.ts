import { createHmac } from 'node:crypto';
import { requestFingerprint } from '@holdfast/idempotency';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractDefinitions as holdfastDefinitions } from '../src/problems';
import { ACCOUNT, KEYS, startTestServer, type TestServer } from './api-harness';
import { type PrismProxy, startPrismProxy, throughPrism, type Violation, violationsOf } from './prism-proxy';
import { eventually, type Receiver, realPostgres, startReceiver } from './webhooks-harness';

// The whole contract over real HTTP, with a ledger. Every response of the tour is recorded
// against the operation of /openapi.json it belongs to and checked for the contract's headers
// as it arrives. At the end the ledger must hold, for every operation the document declares,
// every status the document declares for it (429, 500 and 503 at least once anywhere), and
// every error code of CONTRACT section 2. An operation or status added to the document without
// a tour step fails here. Other files test each behaviour in depth; this one proves the sum.

/** PostgreSQL's `percentile_cont(p)`, rounded as the stats are: `null` for no values. */
function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const at = p * (sorted.length - 1);
  const low = sorted[Math.floor(at)] ?? 0;
  const high = sorted[Math.ceil(at)] ?? 0;
  return Math.round(low + (high - low) * (at - Math.floor(at)));
}

const SUBS_READ = 'hf_test_tourSubscriptionsRead000001';
const RECEIVER_SECRET = `whsec_${Buffer.from('holdfast-contract-tour-secret-32').toString('base64')}`;
const ONCE_ANYWHERE = new Set([429, 500, 503]);
const MiB = 1024 * 1024;

interface Entry {
  readonly operation: string;
  readonly status: number;
  readonly code: string | undefined;
}

interface Reply {
  readonly status: number;
  readonly headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: JSON as the assertions read it
  readonly body: any;
}

const ledger: Entry[] = [];
// With HOLDFAST_PRISM=1 the main server's API and receiver traffic goes through Prism's
// validation proxy; every response violation it reports is kept here (issue 18).
const violations: { where: string; violation: Violation }[] = [];
let prism: PrismProxy | undefined;
const locations = new Set<string>();
const deleted = new Set<string>();
let operations: { method: string; template: string; pattern: RegExp; statuses: number[] }[] = [];

function operationOf(method: string, path: string): string {
  const pathname = path.split('?')[0] ?? path;
  const match = operations.find((op) => op.method === method && op.pattern.test(pathname));
  return match ? `${method} ${match.template}` : `${method} ${pathname}`;
}

/** The contract's headers, checked on every response of the tour as it arrives. */
function checkHeaders(method: string, path: string, reply: Reply, usedKey: boolean): void {
  const where = `${method} ${path} -> ${reply.status}`;
  expect(reply.headers.get('request-id'), where).toMatch(/^req_[A-Za-z0-9_-]{16,}$/);
  if (reply.status >= 400) {
    expect(reply.headers.get('content-type'), where).toMatch(/^application\/problem\+json/);
    const definition = holdfastDefinitions[reply.body.code as keyof typeof holdfastDefinitions];
    expect(definition?.status, `${where}: ${reply.body.code} is a contract code of this status`).toBe(
      reply.status,
    );
    expect(reply.body, where).toMatchObject({ status: reply.status, instance: path.split('?')[0] });
    expect(reply.body.requestId, where).toBe(reply.headers.get('request-id'));
    for (const field of ['type', 'title', 'detail']) expect(typeof reply.body[field], where).toBe('string');
    expect(String(reply.body.type), where).toMatch(new RegExp(`^https?://.+/problems/${reply.body.code}$`));
    expect(JSON.stringify(reply.body), where).not.toMatch(/holdfast_|select |relation |\bat .+\.ts:\d+/i);
  } else if (reply.status !== 204 && method !== 'HEAD') {
    expect(reply.headers.get('content-type'), where).toMatch(/^(application\/json|text\/html)/);
  }
  if (reply.body?.code === 'unauthenticated')
    expect(reply.headers.get('www-authenticate'), where).toMatch(/^Bearer realm="holdfast"/);
  if (reply.body?.code === 'forbidden')
    expect(reply.headers.get('www-authenticate'), where).toMatch(
      /^Bearer realm="holdfast", error="insufficient_scope", scope="[a-z]+:(read|write)"$/,
    );
  if (reply.status === 405) expect(reply.headers.get('allow'), where).toBeTruthy();
  // SPEC section 4 rule 3: 201 names what was created, 202 the status URL to poll.
  if (reply.status === 201 || reply.status === 202) {
    const location = reply.headers.get('location');
    expect(location, where).toMatch(/^\/v1\/[a-z-]+\/[A-Za-z0-9_-]+(\/refunds)?$/);
    locations.add(String(location));
  }
  if ([429, 503].includes(reply.status) || reply.body?.code === 'idempotency_key_in_use') {
    expect(Number(reply.headers.get('retry-after')), where).toBeGreaterThanOrEqual(1);
  }
  // Rate limiting applies per key once the key is known, and per receiver name on /hooks once
  // the signature verified (CONTRACT section 10).
  if (
    (path.startsWith('/v1/') && usedKey && reply.status !== 401) ||
    (path.startsWith('/hooks/') && [200, 429].includes(reply.status))
  ) {
    expect(reply.headers.get('ratelimit'), where).toMatch(/r=\d+/);
    expect(reply.headers.get('ratelimit-policy'), where).toBeTruthy();
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

async function send(
  base: string,
  method: string,
  path: string,
  options: {
    body?: unknown;
    raw?: string;
    key?: string | null;
    headers?: Record<string, string>;
  } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? KEYS.all : options.key;
  if (key !== null && path.startsWith('/v1/')) headers.authorization = `Bearer ${key}`;
  let body: string | undefined = options.raw;
  if (options.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(options.body);
  }
  // Only documented operations: Prism answers anything else itself (no path or method matched).
  const pathname = path.split('?')[0] ?? path;
  const documented = operations.some((op) => op.method === method && op.pattern.test(pathname));
  // And only bodies Prism can read: it answers a body that is not JSON itself, unforwarded.
  const parsable = body === undefined || options.raw === undefined || isJson(options.raw);
  // And no body over the limit: the server answers 413 without reading it and closes once
  // @hono/node-server's drain window (500 ms) has passed, and Prism, still uploading the rest,
  // then answers its own 500 (EPIPE). A direct client reads the 413, as the tour checks.
  const small = body === undefined || body.length <= MiB;
  const proxied = prism && base === t.url && documented && parsable && small;
  const response = await fetch(`${proxied && prism ? prism.url : base}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
  });
  for (const violation of violationsOf(response.headers)) {
    if (violation.location[0] === 'response')
      violations.push({ where: `${method} ${path} -> ${response.status}`, violation });
  }
  const text = await response.text();
  const json =
    /json/.test(response.headers.get('content-type') ?? '') && text !== '' ? JSON.parse(text) : text;
  const reply = { status: response.status, headers: response.headers, body: json };
  checkHeaders(method, path, reply, key !== null);
  if (method === 'DELETE' && reply.status === 204) deleted.add(path);
  ledger.push({
    operation: operationOf(method, path),
    status: reply.status,
    code: reply.status >= 400 ? reply.body.code : undefined,
  });
  return reply;
}

function signed(
  name: string,
  id: string,
  payload: string,
  at = Math.floor(Date.now() / 1000),
  secret = RECEIVER_SECRET,
) {
  const mac = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
    .update(`${id}.${at}.${payload}`)
    .digest('base64');
  return {
    path: `/hooks/${name}`,
    raw: payload,
    key: null,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(at),
      'webhook-signature': `v1,${mac}`,
    },
  };
}

const card = { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 } };
/** A live key of the tour's account: its endpoints count apart, so the quota is reached there. */
const LIVE_KEY = 'hf_live_tourQuotaLiveMode0000000000001';

let t: TestServer;
let tight: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  const keys = [
    { key: KEYS.all, account: ACCOUNT, scopes: ['*'] },
    { key: KEYS.ordersRead, account: ACCOUNT, scopes: ['orders:read'] },
    { key: SUBS_READ, account: ACCOUNT, scopes: ['subscriptions:read'] },
    { key: LIVE_KEY, account: ACCOUNT, scopes: ['*'] },
  ];
  const receivers = JSON.stringify({
    tour: { account: ACCOUNT, secrets: [RECEIVER_SECRET] },
    // Allows only a documentation range: the tour's loopback client is refused before its body is read.
    guarded: { account: ACCOUNT, secrets: [RECEIVER_SECRET], sources: ['203.0.113.0/24'] },
  });
  [t, tight] = await Promise.all([
    startTestServer({
      HOLDFAST_API_KEYS: JSON.stringify(keys),
      HOLDFAST_RECEIVER_SECRETS: receivers,
      HOLDFAST_ALLOW_PRIVATE_DESTINATIONS: '1',
      HOLDFAST_RETRY_SCHEDULE: '1s',
      HOLDFAST_PAYMENT_SETTLE_DELAY: '200ms',
      // The in-use case holds a table lock while a request waits on it: under a loaded CI the
      // default 2 s lock_timeout ended that request (503) before the duplicate was sent.
      HOLDFAST_LOCK_TIMEOUT: '60s',
    }),
    startTestServer({ HOLDFAST_RATE_LIMIT: '2/60s', HOLDFAST_RECEIVER_SECRETS: receivers }),
  ]);
  if (throughPrism) prism = await startPrismProxy(t.url);
  const document = await (await fetch(`${t.url}/openapi.json`)).json();
  for (const [template, item] of Object.entries<Record<string, { responses?: object }>>(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!operation || typeof operation !== 'object' || !operation.responses) continue;
      const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
      operations.push({
        method: method.toUpperCase(),
        template,
        pattern: new RegExp(`^${source}$`),
        statuses: Object.keys(operation.responses).map(Number),
      });
    }
  }
  // Prism's proxy takes about 20 s to load the document on a busy machine.
}, 120_000);

afterAll(async () => {
  await Promise.all([t?.stop().catch(() => {}), tight?.stop(), prism?.stop()]);
  await receiver?.close();
  operations = [];
});

describe('the contract, every operation of /openapi.json', () => {
  const ids: Record<string, string> = {};
  const api = (method: string, path: string, options?: Parameters<typeof send>[3]) =>
    send(t.url, method, path, options);

  it('walks the resources through their successes and business errors', async () => {
    // Orders: create (with and without a key), replay, reuse, fetch with ETag, PATCH with
    // If-Match, ship, cancel, refunds, DELETE.
    const order = await api('POST', '/v1/orders', {
      body: { currency: 'EUR', total: 5000, description: 'tour' },
      headers: { 'idempotency-key': 'tour-order-1' },
    });
    expect(order.status).toBe(201);
    ids.order = order.body.id;
    const replay = await api('POST', '/v1/orders', {
      body: { currency: 'EUR', total: 5000, description: 'tour' },
      headers: { 'idempotency-key': 'tour-order-1' },
    });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.id).toBe(ids.order);
    expect(replay.headers.get('request-id')).not.toBe(order.headers.get('request-id'));
    const reused = await api('POST', '/v1/orders', {
      body: { currency: 'EUR', total: 5001 },
      headers: { 'idempotency-key': 'tour-order-1' },
    });
    expect(reused.body.code).toBe('idempotency_key_reused');
    expect((await api('GET', '/v1/orders?sort=-total,createdAt&status=pending&include=total')).status).toBe(
      200,
    );
    const fetched = await api('GET', `/v1/orders/${ids.order}`);
    const etag = fetched.headers.get('etag');
    expect(etag).toBeTruthy();
    const stale = await api('PATCH', `/v1/orders/${ids.order}`, {
      body: { description: 'stale' },
      headers: { 'if-match': '"not-the-version"' },
    });
    expect(stale.body.code).toBe('version_conflict');
    const patched = await api('PATCH', `/v1/orders/${ids.order}`, {
      body: { description: 'tour, edited' },
      headers: { 'if-match': etag ?? '' },
    });
    expect(patched.status).toBe(200);
    const refund = await api('POST', `/v1/orders/${ids.order}/refunds`, {
      body: { amount: 1000 },
      headers: { 'idempotency-key': 'tour-refund-1' },
    });
    expect(refund.status).toBe(201);
    expect((await api('POST', `/v1/orders/${ids.order}/refunds`, { body: { amount: 4001 } })).body.code).toBe(
      'refund_exceeds_amount',
    );
    expect((await api('GET', `/v1/orders/${ids.order}/refunds`)).body.data).toHaveLength(1);
    expect((await api('DELETE', `/v1/orders/${ids.order}`)).body.code).toBe('invalid_state_transition');
    expect((await api('PATCH', `/v1/orders/${ids.order}`, { body: { status: 'shipped' } })).status).toBe(200);
    expect((await api('POST', `/v1/orders/${ids.order}/cancel`)).body.code).toBe('invalid_state_transition');
    const doomed = await api('POST', '/v1/orders', { body: { currency: 'EUR', total: 10 } });
    expect((await api('POST', `/v1/orders/${doomed.body.id}/cancel`)).body.status).toBe('cancelled');
    expect(
      (await api('POST', `/v1/orders/${doomed.body.id}/refunds`, { body: { amount: 1 } })).body.code,
    ).toBe('invalid_state_transition');
    const pending = await api('POST', '/v1/orders', { body: { currency: 'EUR', total: 20 } });
    expect((await api('DELETE', `/v1/orders/${pending.body.id}`)).status).toBe(204);
    expect((await api('DELETE', `/v1/orders/${pending.body.id}`)).status).toBe(404);

    // Payment methods, payments (201 at once, 202 settling later, 422), subscriptions.
    const method = await api('POST', '/v1/payment-methods', { body: card });
    expect(method.status).toBe(201);
    ids.paymentMethod = method.body.id;
    expect((await api('GET', `/v1/payment-methods/${ids.paymentMethod}`)).status).toBe(200);
    expect((await api('GET', '/v1/payment-methods')).status).toBe(200);
    const spare = await api('POST', '/v1/payment-methods', { body: card });
    expect((await api('DELETE', `/v1/payment-methods/${spare.body.id}`)).status).toBe(204);
    const payment = await api('POST', '/v1/payments', {
      body: { amount: 700, currency: 'EUR', paymentMethod: ids.paymentMethod },
      headers: { 'idempotency-key': 'tour-payment-1' },
    });
    expect(payment.status).toBe(201);
    ids.payment = payment.body.id;
    const later = await api('POST', '/v1/payments', {
      body: { amount: 10_000_000, currency: 'EUR', paymentMethod: ids.paymentMethod },
      headers: { 'idempotency-key': 'tour-payment-2' },
    });
    expect(later.status).toBe(202);
    expect(later.body.status).toBe('processing');
    expect(later.headers.get('location')).toBe(`/v1/payments/${later.body.id}`);
    expect((await api('GET', String(later.headers.get('location')))).status).toBe(200);
    expect((await api('GET', `/v1/payments/${ids.payment}`)).status).toBe(200);
    expect((await api('GET', '/v1/payments?sort=amount')).status).toBe(200);
    const noKey = await api('POST', '/v1/payments', {
      body: { amount: 700, currency: 'EUR', paymentMethod: ids.paymentMethod },
    });
    expect(noKey.body.code).toBe('idempotency_key_required');
    const unknownMethod = await api('POST', '/v1/payments', {
      body: { amount: 700, currency: 'EUR', paymentMethod: 'pm_doesNotExist00000000' },
      headers: { 'idempotency-key': 'tour-payment-3' },
    });
    expect(unknownMethod.body.code).toBe('unprocessable');
    // Payments against an order: not a cancelled one (409), never above what is left (422).
    const cancelled = await api('POST', '/v1/orders', { body: { currency: 'EUR', total: 300 } });
    await api('POST', `/v1/orders/${cancelled.body.id}/cancel`);
    const payCancelled = await api('POST', '/v1/payments', {
      body: { amount: 100, currency: 'EUR', paymentMethod: ids.paymentMethod, order: cancelled.body.id },
      headers: { 'idempotency-key': 'tour-payment-4' },
    });
    expect(payCancelled.body.code).toBe('invalid_state_transition');
    const open = await api('POST', '/v1/orders', { body: { currency: 'EUR', total: 300 } });
    const payTooMuch = await api('POST', '/v1/payments', {
      body: { amount: 301, currency: 'EUR', paymentMethod: ids.paymentMethod, order: open.body.id },
      headers: { 'idempotency-key': 'tour-payment-5' },
    });
    expect(payTooMuch.body.code).toBe('payment_exceeds_total');
    const subscription = await api('POST', '/v1/subscriptions', {
      body: { paymentMethod: ids.paymentMethod, plan: 'pro' },
    });
    expect(subscription.status).toBe(201);
    ids.subscription = subscription.body.id;
    expect(
      (
        await api('POST', '/v1/subscriptions', {
          body: { paymentMethod: 'pm_doesNotExist00000000', plan: 'pro' },
        })
      ).status,
    ).toBe(422);
    expect((await api('GET', '/v1/subscriptions')).status).toBe(200);
    expect((await api('GET', `/v1/subscriptions/${ids.subscription}`)).status).toBe(200);
    expect(
      (await api('PATCH', `/v1/subscriptions/${ids.subscription}`, { body: { quantity: 2 } })).status,
    ).toBe(200);
    const ended = await api('POST', '/v1/subscriptions', {
      body: { paymentMethod: ids.paymentMethod, plan: 'x' },
    });
    expect((await api('POST', `/v1/subscriptions/${ended.body.id}/cancel`)).body.status).toBe('canceled');
    expect((await api('PATCH', `/v1/subscriptions/${ended.body.id}`, { body: { plan: 'y' } })).status).toBe(
      409,
    );
  });

  it('walks webhooks: endpoints, events, deliveries with attempts and replay, notifications, the receiver', async () => {
    expect(
      (await api('POST', '/v1/webhook-endpoints', { body: { url: 'ftp://hooks.example.com/in' } })).body.code,
    ).toBe('destination_url_forbidden');
    const endpoint = await api('POST', '/v1/webhook-endpoints', {
      body: { url: receiver.url, eventTypes: ['order.created'], description: 'tour' },
    });
    expect(endpoint.status).toBe(201);
    expect(endpoint.body.secret).toMatch(/^whsec_/);
    ids.endpoint = endpoint.body.id;
    expect((await api('GET', `/v1/webhook-endpoints/${ids.endpoint}`)).body.secret).toBeUndefined();
    expect((await api('GET', '/v1/webhook-endpoints')).status).toBe(200);
    const refused = await api('PATCH', `/v1/webhook-endpoints/${ids.endpoint}`, {
      body: { url: 'ftp://hooks.example.com/in' },
    });
    expect(refused.status).toBe(422);
    expect(
      (await api('PATCH', `/v1/webhook-endpoints/${ids.endpoint}`, { body: { description: 'tour, edited' } }))
        .status,
    ).toBe(200);
    // The quota (16 per account and mode): reached with the live key, then freed again.
    const live: string[] = [];
    for (;;) {
      const made = await api('POST', '/v1/webhook-endpoints', {
        key: LIVE_KEY,
        body: { url: receiver.url, eventTypes: ['order.created'] },
      });
      if (made.status !== 201) {
        expect(made.body.code).toBe('endpoint_limit_reached');
        break;
      }
      live.push(made.body.id);
    }
    expect(live).toHaveLength(16);
    for (const id of live) await api('DELETE', `/v1/webhook-endpoints/${id}`, { key: LIVE_KEY });
    const rotated = await api('POST', `/v1/webhook-endpoints/${ids.endpoint}/rotate-secret`);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(endpoint.body.secret);

    const order = await api('POST', '/v1/orders', { body: { currency: 'EUR', total: 42 } });
    const delivery = await eventually(
      async () => {
        const list = await api('GET', `/v1/deliveries?endpoint=${ids.endpoint}&status=succeeded`);
        return list.body.data[0];
      },
      20_000,
      'the order.created delivery to succeed',
    );
    expect(receiver.received.some((r) => r.body.includes(order.body.id))).toBe(true);
    ids.delivery = delivery.id;
    const events = await api('GET', '/v1/events?limit=100');
    const event = events.body.data.find(
      (e: { data: { object: { id: string } } }) => e.data.object.id === order.body.id,
    );
    expect(event).toBeDefined();
    ids.event = event.id;
    expect((await api('GET', `/v1/events/${ids.event}`)).body.sequence).toBe(1);
    expect((await api('GET', `/v1/deliveries/${ids.delivery}`)).status).toBe(200);
    expect((await api('GET', `/v1/deliveries/${ids.delivery}/attempts`)).body.data[0].status).toBe(204);
    const replayed = await api('POST', `/v1/deliveries/${ids.delivery}/replay`);
    expect(replayed.status).toBe(202);

    // Bulk recovery and endpoint health (CONTRACT section 10): a delivery dies while the
    // receiver is down, recover re-queues it, and it is sent; the stats count every attempt.
    await eventually(
      async () =>
        (await api('GET', `/v1/deliveries/${ids.delivery}`)).body.status === 'succeeded' ? true : undefined,
      20_000,
      'the replay to succeed',
    );
    // A delivery whose attempt is running (a worker's live lease, held here by hand) is not
    // replayed: 409 delivery_in_flight with Retry-After (CONTRACT section 12).
    const leased = String(ids.delivery);
    await t.server.db.query(
      `update holdfast_deliveries set lease_owner = 'wrk_tour', lease_expires_at = now() + interval '1 minute'
       where id = $1`,
      [leased],
    );
    const inFlight = await api('POST', `/v1/deliveries/${ids.delivery}/replay`);
    expect(inFlight.status).toBe(409);
    expect(inFlight.body.code).toBe('delivery_in_flight');
    expect(Number(inFlight.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await t.server.db.query(
      'update holdfast_deliveries set lease_owner = null, lease_expires_at = null where id = $1',
      [leased],
    );
    const since = new Date().toISOString();
    receiver.respond = () => ({ status: 503 });
    const failing = await api('POST', '/v1/orders', { body: { currency: 'EUR', total: 43 } });
    const dead = await eventually(
      async () => {
        const list = await api('GET', `/v1/deliveries?endpoint=${ids.endpoint}&status=dead`);
        return list.body.data[0];
      },
      20_000,
      'the delivery to die',
    );
    receiver.respond = () => ({ status: 204 });
    expect(
      (
        await api('POST', `/v1/webhook-endpoints/${ids.endpoint}/recover`, {
          body: { since, until: since.replace(/^\d{4}/, '2000') },
        })
      ).body.code,
    ).toBe('validation_failed');
    const recovered = await api('POST', `/v1/webhook-endpoints/${ids.endpoint}/recover`, { body: { since } });
    expect(recovered.status).toBe(202);
    expect(recovered.body).toEqual({ recovered: 1 });
    expect(recovered.headers.get('location')).toBe(`/v1/webhook-endpoints/${ids.endpoint}`);
    await eventually(
      async () =>
        (await api('GET', `/v1/deliveries/${dead.id}`)).body.status === 'succeeded' ? true : undefined,
      20_000,
      'the recovered delivery to succeed',
    );
    expect(receiver.received.filter((r) => r.body.includes(failing.body.id)).length).toBe(3);
    const stats = await api('GET', `/v1/webhook-endpoints/${ids.endpoint}/stats`);
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ endpoint: ids.endpoint, window: '24h', bucketSize: 'hour' });
    expect(stats.body.buckets).toHaveLength(24);
    const sum = (key: 'succeeded' | 'failed' | 'dead') =>
      stats.body.buckets.reduce((n: number, b: Record<string, number>) => n + (b[key] ?? 0), 0);
    // The first order's delivery and its replay, then the recovered one: 3 successes; the two
    // attempts before recovery failed (once recovered and sent, the delivery is dead no more).
    expect([sum('succeeded'), sum('failed'), sum('dead')]).toEqual([3, 2, 0]);
    // Each hour's p50 and p95 are the percentiles (interpolated, rounded) of the latencies its
    // attempts report, read back through the API.
    const logged: { createdAt: string; latencyMs: number }[] = [];
    const deliveries = await api('GET', `/v1/deliveries?endpoint=${ids.endpoint}&limit=100`);
    expect(deliveries.body.pageInfo.hasMore).toBe(false);
    for (const delivery of deliveries.body.data) {
      logged.push(...(await api('GET', `/v1/deliveries/${delivery.id}/attempts?limit=100`)).body.data);
    }
    expect(logged).toHaveLength(5);
    for (const bucket of stats.body.buckets) {
      const inside = logged
        .filter((a) => a.createdAt >= bucket.start && a.createdAt < bucket.end)
        .map((a) => a.latencyMs);
      expect([bucket.p50LatencyMs, bucket.p95LatencyMs], bucket.start).toEqual([
        percentile(inside, 0.5),
        percentile(inside, 0.95),
      ]);
    }
    const week = await api('GET', `/v1/webhook-endpoints/${ids.endpoint}/stats?window=7d`);
    expect(week.body.buckets).toHaveLength(7);
    expect((await api('GET', `/v1/webhook-endpoints/${ids.endpoint}/stats?window=1y`)).status).toBe(400);
    expect((await api('GET', '/v1/notifications')).status).toBe(200);

    // Test events (CONTRACT section 11): 202 with the delivery, sent and logged; 422 for a type the
    // endpoint does not carry; 409 while it is disabled.
    const testPath = `/v1/webhook-endpoints/${ids.endpoint}/test`;
    const tested = await api('POST', testPath, { body: { eventType: 'order.created' } });
    expect(tested.status).toBe(202);
    expect(tested.headers.get('location')).toBe(`/v1/deliveries/${tested.body.id}`);
    await eventually(
      async () =>
        (await api('GET', `/v1/deliveries/${tested.body.id}`)).body.status === 'succeeded' ? true : undefined,
      20_000,
      'the test event to be delivered',
    );
    expect((await api('POST', testPath, { body: { eventType: 'payment.failed' } })).body.code).toBe(
      'unprocessable',
    );
    await api('PATCH', `/v1/webhook-endpoints/${ids.endpoint}`, { body: { status: 'disabled' } });
    expect((await api('POST', testPath, { body: { eventType: 'order.created' } })).body.code).toBe(
      'invalid_state_transition',
    );
    await api('PATCH', `/v1/webhook-endpoints/${ids.endpoint}`, { body: { status: 'active' } });

    // The receiver: verified and queued (200), then listed; a duplicate is acknowledged.
    const payload = JSON.stringify({
      id: 'evt_tour_in_1',
      type: 'subscription.updated',
      createdAt: new Date().toISOString(),
      sequence: 1,
      data: { object: { id: 'sub_remote', updatedAt: new Date().toISOString() } },
    });
    const received = await send(t.url, 'POST', '/hooks/tour', signed('tour', 'evt_tour_in_1', payload));
    expect(received.status).toBe(200);
    const old = Math.floor(Date.now() / 1000) - 3600;
    expect(
      (await send(t.url, 'POST', '/hooks/tour', signed('tour', 'evt_tour_in_2', payload, old))).body.code,
    ).toBe('webhook_timestamp_out_of_window');
    const forged = signed(
      'tour',
      'evt_tour_in_3',
      payload,
      undefined,
      `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
    );
    expect((await send(t.url, 'POST', '/hooks/tour', forged)).body.code).toBe('webhook_signature_invalid');
    expect((await send(t.url, 'POST', '/hooks/nobody', signed('nobody', 'evt_x', payload))).status).toBe(404);
    expect((await send(t.url, 'POST', '/hooks/guarded', signed('guarded', 'evt_g', payload))).body.code).toBe(
      'webhook_source_forbidden',
    );
    const huge = signed('tour', 'evt_tour_in_4', `{"pad":"${'x'.repeat(MiB)}"}`);
    expect((await send(t.url, 'POST', '/hooks/tour', huge)).status).toBe(413);
    const inbound = await api('GET', '/v1/inbound-events');
    expect(inbound.body.data.map((e: { webhookId: string }) => e.webhookId)).toContain('evt_tour_in_1');

    const deleted = await api('POST', '/v1/webhook-endpoints', { body: { url: receiver.url } });
    expect((await api('DELETE', `/v1/webhook-endpoints/${deleted.body.id}`)).status).toBe(204);
  });

  it('answers every operation with 400, 401, 403, 404, 413 and 415 where it declares them', async () => {
    const fake: Record<string, string> = {
      orders: 'ord_doesNotExist00000000000',
      payments: 'pay_doesNotExist00000000000',
      'payment-methods': 'pm_doesNotExist000000000000',
      subscriptions: 'sub_doesNotExist00000000000',
      'webhook-endpoints': 'we_doesNotExist000000000000',
      events: 'evt_doesNotExist00000000000',
      deliveries: 'dlv_doesNotExist00000000000',
    };
    const real: Record<string, string | undefined> = {
      orders: ids.order,
      payments: ids.payment,
      'payment-methods': ids.paymentMethod,
      subscriptions: ids.subscription,
      'webhook-endpoints': ids.endpoint,
      events: ids.event,
      deliveries: ids.delivery,
    };
    const bodies: Record<string, unknown> = {
      'POST /v1/orders': { currency: 'EUR', total: 1 },
      'PATCH /v1/orders/{id}': { description: 'x' },
      'POST /v1/orders/{id}/refunds': { amount: 1 },
      'POST /v1/payments': { amount: 1, currency: 'EUR', paymentMethod: ids.paymentMethod },
      'POST /v1/payment-methods': card,
      'POST /v1/subscriptions': { paymentMethod: ids.paymentMethod, plan: 'pro' },
      'PATCH /v1/subscriptions/{id}': { quantity: 3 },
      'POST /v1/webhook-endpoints': { url: receiver.url },
      'PATCH /v1/webhook-endpoints/{id}': { description: 'x' },
      'POST /v1/webhook-endpoints/{id}/recover': { since: new Date(Date.now() - 60_000).toISOString() },
      'POST /v1/webhook-endpoints/{id}/test': { eventType: 'order.created' },
    };
    const v1 = operations.filter((op) => op.template.startsWith('/v1/'));
    expect(v1.length).toBeGreaterThanOrEqual(33);
    for (const op of v1) {
      const resource = op.template.split('/')[2] ?? '';
      const concrete = (ids: Record<string, string | undefined>) =>
        op.template.replace('{id}', ids[resource] ?? '');
      const name = `${op.method} ${op.template}`;
      const body = bodies[name];
      const keyed = { 'idempotency-key': `tour-${crypto.randomUUID()}` };
      const options = { ...(body === undefined ? {} : { body }), headers: keyed };
      const path = concrete(real);
      expect(path, name).not.toContain('{');
      if (op.statuses.includes(401)) {
        expect((await api(op.method, path, { ...options, key: null })).status, name).toBe(401);
        expect(
          (await api(op.method, path, { ...options, key: 'hf_test_notAKeyWeKnow0000000001' })).status,
        ).toBe(401);
      }
      if (op.statuses.includes(403)) {
        const lacking = resource === 'orders' ? SUBS_READ : KEYS.ordersRead;
        expect((await api(op.method, path, { ...options, key: lacking })).body.code, name).toBe('forbidden');
      }
      if (op.statuses.includes(400)) {
        const answer = await api(op.method, `${path}?notAParameter=1`, options);
        expect(answer.body.code, name).toBe('unknown_field');
        expect(answer.body.errors[0].field, name).toBe('notAParameter');
      }
      if (op.statuses.includes(404)) {
        expect((await api(op.method, concrete(fake), options)).body.code, name).toBe('not_found');
      }
      if (op.statuses.includes(413)) {
        const answer = await api(op.method, path, {
          raw: `{"description":"${'x'.repeat(MiB)}"}`,
          headers: { ...keyed, 'content-type': 'application/json' },
        });
        expect(answer.body.code, name).toBe('payload_too_large');
      }
      if (op.statuses.includes(415)) {
        const answer = await api(op.method, path, {
          raw: 'total=1',
          headers: { ...keyed, 'content-type': 'text/plain' },
        });
        expect(answer.body.code, name).toBe('unsupported_media_type');
      }
    }
  }, 60_000);

  it('refuses malformed requests with the 400 codes of the contract, and 405 with Allow', async () => {
    expect(
      (await api('POST', '/v1/orders', { raw: '{"total":', headers: { 'content-type': 'application/json' } }))
        .body.code,
    ).toBe('invalid_json');
    expect((await api('POST', '/v1/orders', { body: { currency: 'EUR', total: -1 } })).body.code).toBe(
      'validation_failed',
    );
    expect(
      (await api('POST', '/v1/orders', { body: { currency: 'EUR', total: 1, colour: 'red' } })).body.code,
    ).toBe('unknown_field');
    const badSort = await api('GET', '/v1/orders?sort=colour');
    expect(badSort.body.code).toBe('invalid_sort');
    expect(badSort.body.detail).toContain('colour');
    expect((await api('GET', '/v1/orders?sort=total,status,createdAt,-total')).body.code).toBe(
      'too_many_sort_keys',
    );
    const page = await api('GET', '/v1/orders?limit=1');
    expect(page.body.pageInfo.hasMore).toBe(true);
    const cursor = page.body.pageInfo.nextCursor;
    expect((await api('GET', `/v1/orders?limit=1&cursor=${cursor}`)).status).toBe(200);
    expect((await api('GET', `/v1/orders?limit=1&sort=total&cursor=${cursor}`)).body.code).toBe(
      'invalid_cursor',
    );
    expect((await api('GET', `/v1/orders?cursor=${cursor.slice(0, -2)}xx`)).body.code).toBe('invalid_cursor');
    const wrongMethod = await api('PUT', '/v1/orders');
    expect(wrongMethod.body.code).toBe('method_not_allowed');
    expect(wrongMethod.headers.get('allow')).toContain('GET');
    expect((await api('GET', '/v1/nothing-here')).body.code).toBe('not_found');
  });

  it('serves the pages outside /v1', async () => {
    for (const path of [
      '/healthz',
      '/livez',
      '/readyz',
      '/openapi.json',
      '/docs',
      '/dashboard',
      '/problems/invalid_cursor',
      '/webhook-source-addresses',
    ]) {
      expect((await send(t.url, 'GET', path, { key: null })).status, path).toBe(200);
    }
    expect((await send(t.url, 'GET', '/problems/no_such_code', { key: null })).status).toBe(404);
  });

  it('resolves every Location a 201 or 202 gave', async () => {
    expect(locations.size).toBeGreaterThanOrEqual(8);
    for (const location of locations) {
      expect((await api('GET', location)).status, location).toBe(deleted.has(location) ? 404 : 200);
    }
  });

  it.skipIf(!realPostgres)(
    'answers 409 idempotency_key_in_use while the first request with the key runs (needs DATABASE_URL: a lock held on another connection)',
    async () => {
      const cases = [
        { table: 'holdfast_orders', path: '/v1/orders', body: { currency: 'EUR', total: 3 } },
        {
          table: 'holdfast_payments',
          path: '/v1/payments',
          body: { amount: 3, currency: 'EUR', paymentMethod: ids.paymentMethod },
        },
        { table: 'holdfast_refunds', path: `/v1/orders/${ids.order}/refunds`, body: { amount: 1 } },
      ];
      for (const { table, path, body } of cases) {
        const headers = { 'idempotency-key': `tour-in-use-${crypto.randomUUID()}` };
        if (table === 'holdfast_orders') {
          // POST /v1/orders claims, writes and answers in one statement, which a duplicate waits
          // for; a key held by a running attempt (a takeover of an abandoned key runs in a
          // transaction) is 409. Hold one as such an attempt does.
          const fingerprint = await requestFingerprint({ method: 'POST', path, account: ACCOUNT, body });
          await t.server.db.query(
            `insert into holdfast_idempotency_keys (account, key, fingerprint, token, locked_until, created_at, expires_at)
             values ($1, $2, $3, 'running', now() + interval '1 minute', now(), now() + interval '1 day')`,
            [ACCOUNT, headers['idempotency-key'], fingerprint],
          );
          const second = await api('POST', path, { body, headers });
          expect(second.status).toBe(409);
          expect(second.body.code).toBe('idempotency_key_in_use');
          continue;
        }
        let first: Promise<Reply> | undefined;
        await t.server.transaction(async (_tx, tx) => {
          await tx.query(`lock table ${table} in exclusive mode`);
          first = api('POST', path, { body, headers });
          // Once the first request waits for the lock holding its key's advisory lock, it has
          // claimed the key and is running. (The settlement worker waits on the payments table
          // too, every round, holding no key: counting it sent the second request too early.)
          await eventually(async () => {
            const [row] = await t.server.db.query<{ waiting: number }>(
              `select count(*)::int as waiting from pg_locks w
               where w.relation = $1::regclass and not w.granted
                 and exists (select from pg_locks a
                             where a.pid = w.pid and a.locktype = 'advisory' and a.granted)`,
              [table],
            );
            return row && row.waiting > 0 ? true : undefined;
          });
          const second = await api('POST', path, { body, headers });
          expect(second.body.code).toBe('idempotency_key_in_use');
          expect(second.status).toBe(409);
        });
        expect((await first)?.status).toBe(201);
      }
    },
  );

  it('answers 429 with Retry-After once a key or a receiver spends its burst', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await send(tight.url, 'GET', '/v1/orders')).status);
    expect(statuses).toEqual([200, 200, 429]);
    const payload = '{}';
    const hooks: number[] = [];
    for (let i = 0; i < 3; i++)
      hooks.push((await send(tight.url, 'POST', '/hooks/tour', signed('tour', `evt_t${i}`, payload))).status);
    expect(hooks.at(-1)).toBe(429);
  });

  it('answers 500 internal_error without leaking the cause, then 503 once the database is gone', async () => {
    await t.server.db.query('drop table holdfast_payment_methods cascade');
    const broken = await api('GET', '/v1/payment-methods');
    expect(broken.status).toBe(500);
    expect(broken.body.code).toBe('internal_error');
    await t.endDatabase();
    const down = await api('GET', '/v1/orders');
    expect(down.status).toBe(503);
    expect(down.body.code).toBe('service_unavailable');
  });

  it.skipIf(!throughPrism)('sent no response that breaks the document, by Prism (HOLDFAST_PRISM=1)', () => {
    expect(ledger.length).toBeGreaterThan(200);
    expect(violations).toEqual([]);
  });

  it('has recorded every declared status of every operation and every error code', () => {
    const seen = new Map<string, Set<number>>();
    for (const entry of ledger) {
      const statuses = seen.get(entry.operation) ?? new Set();
      statuses.add(entry.status);
      seen.set(entry.operation, statuses);
    }
    const inUseNeedsPostgres = (name: string, status: number) =>
      !realPostgres && status === 409 && ['POST /v1/orders', 'POST /v1/payments'].includes(name);
    const missing: string[] = [];
    for (const op of operations) {
      const name = `${op.method} ${op.template}`;
      for (const status of op.statuses) {
        if (ONCE_ANYWHERE.has(status) || inUseNeedsPostgres(name, status)) continue;
        if (!seen.get(name)?.has(status)) missing.push(`${name} ${status}`);
      }
    }
    expect(missing).toEqual([]);
    const statuses = new Set(ledger.map((entry) => entry.status));
    for (const status of ONCE_ANYWHERE) expect(statuses.has(status), String(status)).toBe(true);
    const codes = new Set(ledger.map((entry) => entry.code));
    const unseen = Object.keys(holdfastDefinitions).filter(
      (code) => !codes.has(code) && (realPostgres || code !== 'idempotency_key_in_use'),
    );
    expect(unseen).toEqual([]);
  });
});
