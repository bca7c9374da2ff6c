import { readFile } from 'node:fs/promises';
import createClient from 'openapi-fetch';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestServer, type TestServer } from './api-harness';
import type { components, paths } from './generated/v1';
import { eventually, type Receiver, startReceiver } from './webhooks-harness';

// Issue 18: a client generated from /openapi.json by openapi-typescript, used through
// openapi-fetch for a realistic flow. It type-checks under the repo's strict settings with no
// cast (npm run typecheck covers this file), so a typo in a sort key, an event type or a problem
// code does not compile; and it runs against the server. Regenerate the types with
// `npm run contract:client` after `npm run contract:accept`.

const GENERATED = new URL('./generated/v1.ts', import.meta.url);

let t: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  t = await startTestServer({ HOLDFAST_ALLOW_PRIVATE_DESTINATIONS: '1', HOLDFAST_RETRY_SCHEDULE: '1s' });
});
afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

const client = () =>
  createClient<paths>({
    baseUrl: t.url,
    headers: { authorization: `Bearer ${KEYS.all}` },
    // `sort` is declared style: form, explode: false: one comma-separated value.
    querySerializer: { array: { style: 'form', explode: false } },
  });

describe('a client generated from /openapi.json (openapi-typescript + openapi-fetch)', () => {
  it('is generated from the document the server serves', async () => {
    const served = await (await fetch(`${t.url}/openapi.json`)).text();
    const fresh = astToString(await openapiTS(served));
    const committed = await readFile(GENERATED, 'utf8');
    // The committed file is the CLI's output: the same declarations after its banner.
    expect(
      committed.includes(fresh.trim()),
      'test/generated/v1.ts is not the client of the served /openapi.json: run npm run contract:refresh',
    ).toBe(true);
  }, 60_000);

  it('runs orders with sort and pagination, a payment with an idempotency key, a refund, an endpoint and its deliveries', async () => {
    const api = client();

    // A webhook endpoint first, so the orders below are delivered to it.
    const endpoint = await api.POST('/v1/webhook-endpoints', {
      body: {
        url: receiver.url,
        // @ts-expect-error an event type the server does not emit does not compile
        eventTypes: ['order.created', 'order.shiped'].slice(0, 1),
        description: 'typed client',
      },
    });
    if (!endpoint.data) throw new Error(`endpoint: ${endpoint.error?.code}`);
    expect(endpoint.data.secret).toMatch(/^whsec_/);

    const totals = [300, 100, 200];
    const created: components['schemas']['Order'][] = [];
    for (const [i, total] of totals.entries()) {
      const order = await api.POST('/v1/orders', {
        params: { header: { 'idempotency-key': `typed-order-${i}` } },
        body: { currency: 'EUR', total, description: `typed ${i}` },
      });
      if (!order.data) throw new Error(`order: ${order.error?.code}`);
      created.push(order.data);
    }

    // Sorted by total, descending, two per page: the sort values are the generated enum.
    const first = await api.GET('/v1/orders', {
      params: { query: { sort: ['-total', 'createdAt'], limit: 2 } },
    });
    if (!first.data) throw new Error(`list: ${first.error?.code}`);
    expect(first.data.data.map((o) => o.total)).toEqual([300, 200]);
    expect(first.data.pageInfo.hasMore).toBe(true);
    const cursor = first.data.pageInfo.nextCursor;
    if (cursor === null) throw new Error('page 1 has no next cursor');
    const second = await api.GET('/v1/orders', {
      params: { query: { sort: ['-total', 'createdAt'], limit: 2, cursor, include: 'total' } },
    });
    if (!second.data) throw new Error(`page 2: ${second.error?.code}`);
    expect(second.data.data.map((o) => o.total)).toEqual([100]);
    expect(second.data.pageInfo.hasMore).toBe(false);

    // A payment with an idempotency key, then the same request again: the stored answer.
    const [top, middle] = created;
    if (!top || !middle) throw new Error('orders missing');
    const method = await api.POST('/v1/payment-methods', {
      body: { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 } },
    });
    if (!method.data) throw new Error(`method: ${method.error?.code}`);
    const pay = () =>
      api.POST('/v1/payments', {
        params: { header: { 'idempotency-key': 'typed-payment-1' } },
        body: { amount: 300, currency: 'EUR', paymentMethod: method.data.id, order: top.id },
      });
    const payment = await pay();
    if (!payment.data) throw new Error(`payment: ${payment.error?.code}`);
    const again = await pay();
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.data?.id).toBe(payment.data.id);

    // A refund, and one too many: the problem code is a closed union the compiler checks.
    const orderId = top.id;
    const refund = await api.POST('/v1/orders/{id}/refunds', {
      params: { path: { id: orderId }, header: { 'idempotency-key': 'typed-refund-1' } },
      body: { amount: 250, reason: 'typed client' },
    });
    expect(refund.data?.amount).toBe(250);
    const tooMuch = await api.POST('/v1/orders/{id}/refunds', {
      params: { path: { id: orderId } },
      body: { amount: 100 },
    });
    const code = tooMuch.error?.code;
    const expected: typeof code = 'refund_exceeds_amount';
    // @ts-expect-error a typo is not one of the codes the document declares
    const typo: typeof code = 'refund_exceeds_amont';
    expect(typo).toBeDefined();
    expect(code).toBe(expected);

    // The action that takes no fields refuses one rather than ignoring it.
    const cancel = await fetch(`${t.url}/v1/orders/${middle.id}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.all}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'x' }),
    });
    expect(cancel.status).toBe(400);
    expect((await cancel.json()).code).toBe('unknown_field');
    const cancelled = await api.POST('/v1/orders/{id}/cancel', {
      params: { path: { id: middle.id ?? '' } },
    });
    expect(cancelled.data?.status).toBe('cancelled');

    // The endpoint's deliveries: eventType is the generated EventType enum.
    const delivery = await eventually(async () => {
      const list = await api.GET('/v1/deliveries', {
        params: { query: { endpoint: endpoint.data.id, status: 'succeeded', sort: ['createdAt'] } },
      });
      return list.data && list.data.data.length === totals.length ? list.data.data : undefined;
    }, 20_000);
    const types: components['schemas']['EventType'][] = delivery.map((d) => d.eventType);
    expect(new Set(types)).toEqual(new Set(['order.created']));
    const attempts = await api.GET('/v1/deliveries/{id}/attempts', {
      params: { path: { id: delivery[0]?.id ?? '' } },
    });
    expect(attempts.data?.data[0]?.status).toBe(204);
  }, 60_000);
});
