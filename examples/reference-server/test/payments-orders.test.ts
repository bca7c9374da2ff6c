import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Answer, call, startTestServer, type TestServer } from './api-harness';

// A payment against an order (CONTRACT section 11, issue 28 finding 8): not against a cancelled
// order (409), not in another currency (422), and never above what is left of the order's total
// (422 payment_exceeds_total), with parallel payments judged one at a time.

let server: TestServer;
let card: string;
let declined: string;
let seq = 0;

beforeAll(async () => {
  server = await startTestServer({ HOLDFAST_ROLE: 'api' });
  const method = (last4: string) =>
    call(server.url, 'POST', '/v1/payment-methods', {
      body: { type: 'card', card: { brand: 'visa', last4, expMonth: 12, expYear: 2030 } },
    });
  card = String((await method('4242')).body.id);
  declined = String((await method('0002')).body.id);
});

afterAll(async () => {
  await server?.stop();
});

async function order(total: number, currency = 'EUR'): Promise<string> {
  const answer = await call(server.url, 'POST', '/v1/orders', { body: { currency, total } });
  expect(answer.status).toBe(201);
  return String(answer.body.id);
}

const pay = (orderId: string, amount: number, options: { currency?: string; method?: string } = {}) =>
  call(server.url, 'POST', '/v1/payments', {
    headers: { 'idempotency-key': `pay-orders-${++seq}` },
    body: {
      amount,
      currency: options.currency ?? 'EUR',
      paymentMethod: options.method ?? card,
      order: orderId,
    },
  });

function expectProblem(answer: Answer, status: number, code: string): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body.code).toBe(code);
}

async function payments(orderId: string): Promise<number> {
  const list = await call(server.url, 'GET', `/v1/payments?order=${orderId}&include=total`);
  return Number(list.body.pageInfo?.totalCount);
}

it('refuses a payment against a cancelled order with 409 invalid_state_transition', async () => {
  const id = await order(1000);
  expect((await call(server.url, 'POST', `/v1/orders/${id}/cancel`)).status).toBe(200);
  const answer = await pay(id, 100);
  expectProblem(answer, 409, 'invalid_state_transition');
  expect(answer.body.detail).toMatch(/cancelled/);
  expect(await payments(id)).toBe(0);
});

it('refuses another currency (422 unprocessable) and more than is left of the total (422 payment_exceeds_total)', async () => {
  const id = await order(1000);
  expectProblem(await pay(id, 100, { currency: 'USD' }), 422, 'unprocessable');
  const over = await pay(id, 1001);
  expectProblem(over, 422, 'payment_exceeds_total');
  expect(over.body.errors).toEqual([expect.objectContaining({ field: 'amount', pointer: '#/amount' })]);
  expect(over.body.detail).toMatch(/At most 1000 EUR/);
  expect(await payments(id)).toBe(0);

  expect((await pay(id, 600)).status).toBe(201);
  expectProblem(await pay(id, 401), 422, 'payment_exceeds_total');
  // A declined payment pays nothing, so it leaves the rest payable.
  const failed = await pay(id, 400, { method: declined });
  expect(failed.status).toBe(201);
  expect(failed.body.status).toBe('failed');
  expect((await pay(id, 400)).status).toBe(201);
  expectProblem(await pay(id, 1), 422, 'payment_exceeds_total');
  expect(await payments(id)).toBe(3);
});

it('judges parallel payments of one order one at a time: never more than its total', async () => {
  const id = await order(1000);
  const answers = await Promise.all(Array.from({ length: 10 }, () => pay(id, 300)));
  const statuses = answers.map((answer) => answer.status).sort();
  expect(statuses.filter((status) => status === 201)).toHaveLength(3);
  expect(statuses.filter((status) => status === 422)).toHaveLength(7);
  for (const answer of answers)
    if (answer.status === 422) expect(answer.body.code).toBe('payment_exceeds_total');
  expect(await payments(id)).toBe(3);
});

it('declares both refusals for POST /v1/payments in /openapi.json', async () => {
  const document = await call(server.url, 'GET', '/openapi.json', { key: null });
  const responses = document.body.paths?.['/v1/payments']?.post?.responses;
  expect(String(responses?.['409']?.description)).toMatch(/invalid_state_transition/);
  expect(String(responses?.['422']?.description)).toMatch(/payment_exceeds_total/);
  const page = await fetch(new URL('/problems/payment_exceeds_total', server.url));
  expect(page.status).toBe(200);
});
