import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config';
import {
  ACCOUNT,
  type ApiResponse,
  api,
  eventually,
  OTHER_ACCOUNT,
  startTestServer,
  type TestServer,
} from './webhooks-harness';

// CONTRACT section 12, "In flight": replaying a delivery whose attempt is running is 409
// delivery_in_flight with Retry-After (nothing is sent twice at once), and test events and
// recoveries have quotas per endpoint and window (429 rate_limited with Retry-After), counted in
// the database so they hold across API processes.

const KEYS = {
  all: 'hf_test_inFlightQuotasAll0000000001',
  other: 'hf_test_inFlightQuotasOther00000001',
} as const;

let server: TestServer;
const open = new Map<string, number>();
const most = new Map<string, number>();
const held: (() => void)[] = [];
let hold = false;
let receiverUrl = '';
let closeReceiver: () => Promise<void> = async () => {};

beforeAll(async () => {
  const receiver = createServer((req, res) => {
    const id = String(req.headers['webhook-id']);
    open.set(id, (open.get(id) ?? 0) + 1);
    most.set(id, Math.max(most.get(id) ?? 0, open.get(id) ?? 0));
    req.resume();
    const answer = () => {
      open.set(id, (open.get(id) ?? 1) - 1);
      res.writeHead(204).end();
    };
    if (hold) held.push(answer);
    else req.on('end', answer);
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  closeReceiver = () =>
    new Promise((resolve) => {
      receiver.closeAllConnections();
      receiver.close(() => resolve());
    });
  server = await startTestServer({
    HOLDFAST_API_KEYS: JSON.stringify([
      { key: KEYS.all, account: ACCOUNT, scopes: ['*'] },
      { key: KEYS.other, account: OTHER_ACCOUNT, scopes: ['*'] },
    ]),
    HOLDFAST_RETRY_SCHEDULE: '1h',
    HOLDFAST_DELIVERY_POLL: '20ms',
    HOLDFAST_TEST_EVENT_QUOTA: '3/1m',
    HOLDFAST_RECOVER_QUOTA: '2/1h',
  });
});

afterAll(async () => {
  for (const answer of held.splice(0)) answer();
  await server?.close();
  await closeReceiver();
});

const call = (method: string, path: string, options: Parameters<typeof api>[3] = {}) =>
  api(server.url, method, path, { key: KEYS.all, ...options });

function expectProblem(response: ApiResponse, status: number, code: string): void {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body.code).toBe(code);
}

async function endpoint(key: string = KEYS.all): Promise<{ id: string }> {
  const response = await call('POST', '/v1/webhook-endpoints', {
    key,
    body: { url: receiverUrl, eventTypes: ['order.created'] },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}

const sendTest = (id: string, key: string = KEYS.all) =>
  call('POST', `/v1/webhook-endpoints/${id}/test`, { key, body: { eventType: 'order.created' } });

const deliveriesOf = async (id: string): Promise<number> =>
  (await call('GET', `/v1/deliveries?endpoint=${id}&limit=100`)).body.data.length;

describe('replay of a delivery in flight', () => {
  it('is 409 delivery_in_flight with Retry-After while its attempt runs, 202 once it ended; one attempt at a time', async () => {
    const target = await endpoint();
    hold = true;
    const sent = await sendTest(target.id);
    expect(sent.status).toBe(202);
    const id: string = sent.body.id;
    const event: string = (await call('GET', `/v1/deliveries/${id}`)).body.event;
    await eventually(async () => ((open.get(event) ?? 0) === 1 ? true : undefined), 15_000, 'the attempt');
    const storm = await Promise.all(
      Array.from({ length: 10 }, () => call('POST', `/v1/deliveries/${id}/replay`)),
    );
    for (const response of storm) {
      expectProblem(response, 409, 'delivery_in_flight');
      const retryAfter = Number(response.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(10);
    }
    expect((await call('GET', `/v1/deliveries/${id}`)).body).toMatchObject({
      status: 'pending',
      attemptCount: 0,
    });
    hold = false;
    for (const answer of held.splice(0)) answer();
    await eventually(
      async () =>
        (await call('GET', `/v1/deliveries/${id}`)).body.status === 'succeeded' ? true : undefined,
      15_000,
      'the attempt to end',
    );
    const replayed = await call('POST', `/v1/deliveries/${id}/replay`);
    expect(replayed.status, JSON.stringify(replayed.body)).toBe(202);
    await eventually(
      async () => ((await call('GET', `/v1/deliveries/${id}`)).body.attemptCount === 2 ? true : undefined),
      15_000,
      'the replay to be sent',
    );
    expect(most.get(event)).toBe(1);
    const attempts = await call('GET', `/v1/deliveries/${id}/attempts`);
    expect(attempts.body.data).toHaveLength(2);
  });

  it('is declared on the route and explained at /problems/delivery_in_flight', async () => {
    const document = await (await fetch(new URL('/openapi.json', server.url))).json();
    const responses = document.paths['/v1/deliveries/{id}/replay'].post.responses;
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(['202', '409', '429']));
    expect(responses['409'].description).toContain('delivery_in_flight');
    const page = await fetch(new URL('/problems/delivery_in_flight', server.url));
    expect(page.status).toBe(200);
  });
});

describe('quotas per endpoint', () => {
  it('test events: the quota of the window, then 429 rate_limited with Retry-After; nothing queued; per endpoint', async () => {
    const target = await endpoint();
    const beside = await endpoint();
    // Concurrent requests count exactly: 3 of 6 pass.
    const first = await Promise.all(Array.from({ length: 6 }, () => sendTest(target.id)));
    expect(first.filter((r) => r.status === 202)).toHaveLength(3);
    for (const refused of first.filter((r) => r.status !== 202)) {
      expectProblem(refused, 429, 'rate_limited');
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
    }
    expect(await deliveriesOf(target.id)).toBe(3);
    // Another endpoint has its own quota; another account's request is 404, never 429.
    expect((await sendTest(beside.id)).status).toBe(202);
    expectProblem(await sendTest(target.id, KEYS.other), 404, 'not_found');
    // A refused request (422) spends nothing.
    const fresh = await endpoint();
    const wrongType = await call('POST', `/v1/webhook-endpoints/${fresh.id}/test`, {
      body: { eventType: 'payment.succeeded' },
    });
    expectProblem(wrongType, 422, 'unprocessable');
    for (let i = 0; i < 3; i += 1) expect((await sendTest(fresh.id)).status).toBe(202);
    expectProblem(await sendTest(fresh.id), 429, 'rate_limited');
  });

  it('recover: the quota of the window, then 429 rate_limited with Retry-After', async () => {
    const target = await endpoint();
    const recover = () =>
      call('POST', `/v1/webhook-endpoints/${target.id}/recover`, { body: { since: '2026-01-01T00:00:00Z' } });
    expect((await recover()).status).toBe(202);
    expect((await recover()).status).toBe(202);
    const refused = await recover();
    expectProblem(refused, 429, 'rate_limited');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    // The key's own limit still shows beside the endpoint's quota refusal.
    expect(refused.headers.get('ratelimit')).toMatch(/r=\d+/);
    const document = await (await fetch(new URL('/openapi.json', server.url))).json();
    const responses = document.paths['/v1/webhook-endpoints/{id}/recover'].post.responses;
    expect(responses['429'].description).toContain('HOLDFAST_RECOVER_QUOTA');
  });
});

describe('configuration', () => {
  it('has documented defaults and refuses unreadable values', () => {
    expect(loadConfig({}).endpointQuotas).toEqual({
      testEvents: { limit: 10, windowMs: 60_000 },
      recover: { limit: 5, windowMs: 3_600_000 },
      recoverMax: 1000,
    });
    expect(
      loadConfig({
        HOLDFAST_TEST_EVENT_QUOTA: '20/30s',
        HOLDFAST_RECOVER_QUOTA: '1/1d',
        HOLDFAST_RECOVER_MAX: '50',
      }).endpointQuotas,
    ).toEqual({
      testEvents: { limit: 20, windowMs: 30_000 },
      recover: { limit: 1, windowMs: 86_400_000 },
      recoverMax: 50,
    });
    for (const bad of ['ten', '0/1m', '5/10ms', '5']) {
      expect(() => loadConfig({ HOLDFAST_TEST_EVENT_QUOTA: bad })).toThrow(ConfigError);
    }
    expect(() => loadConfig({ HOLDFAST_RECOVER_MAX: '0' })).toThrow(ConfigError);
  });
});
