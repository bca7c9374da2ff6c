import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Answer, call, KEYS, startTestServer, type TestServer } from './api-harness';

// Edge cases of the commerce resources (CONTRACT sections 1, 4, 5): client input that must never
// reach a 500 (huge, fractional or string money; malformed ids; bad currencies; metadata limits),
// cross-account references, and the list errors of every resource. api.test.ts covers the happy
// paths; this file probes the edges. One server for the file keeps it cheap.

let t: TestServer;
const api = (method: string, path: string, options?: Parameters<typeof call>[3]) =>
  call(t.url, method, path, options);

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.stop();
});

function expectProblem(answer: Answer, status: number, code: string): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body.code).toBe(code);
}

const card = (key?: string) =>
  api('POST', '/v1/payment-methods', {
    ...(key ? { key } : {}),
    body: { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 } },
  });

describe('a request that needs a body and has none', () => {
  it('is one clear 400 whether or not it says Content-Type: application/json', async () => {
    const [order] = [(await api('POST', '/v1/orders', { body: { currency: 'EUR', total: 1 } })).body];
    const cases: [string, string][] = [
      ['POST', '/v1/orders'],
      ['POST', '/v1/payments'],
      ['POST', '/v1/payment-methods'],
      ['POST', '/v1/subscriptions'],
      ['POST', '/v1/webhook-endpoints'],
      ['POST', `/v1/orders/${order.id}/refunds`],
    ];
    for (const [method, path] of cases) {
      for (const headers of [{}, { 'content-type': 'application/json' }]) {
        const answer = await api(method, path, {
          headers: { ...headers, 'idempotency-key': crypto.randomUUID() },
        });
        expectProblem(answer, 400, 'validation_failed');
        expect(answer.body.detail, `${method} ${path} ${JSON.stringify(headers)}`).toMatch(
          /needs a JSON body/,
        );
      }
    }
    // A PATCH with a JSON Content-Type and nothing after it: the same answer.
    const patch = await api('PATCH', `/v1/orders/${order.id}`, {
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(patch, 400, 'validation_failed');
    expect(patch.body.detail).toMatch(/needs a JSON body/);
  });
});

describe('money and currency', () => {
  it('rejects fractional, string, negative and unsafe totals with 400, never 500', async () => {
    for (const total of [10.5, '100', -1, 2 ** 53, 1e300, null, true, [1], { v: 1 }]) {
      const answer = await api('POST', '/v1/orders', { body: { currency: 'EUR', total } });
      expectProblem(answer, 400, 'validation_failed');
    }
    // A number literal beyond 2^53 in the raw JSON text.
    const raw = await api('POST', '/v1/orders', {
      body: '{"currency":"EUR","total":123456789012345678901234567890}',
    });
    expectProblem(raw, 400, 'validation_failed');
    const ok = await api('POST', '/v1/orders', { body: { currency: 'EUR', total: Number.MAX_SAFE_INTEGER } });
    expect(ok.status).toBe(201);
    expect(ok.body.total).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('accepts only upper-case active ISO 4217 codes', async () => {
    for (const currency of ['eur', 'EURO', 'XXY', 'ZZZ', '', 'E1R']) {
      expectProblem(
        await api('POST', '/v1/orders', { body: { currency, total: 1 } }),
        400,
        'validation_failed',
      );
    }
    for (const currency of ['JPY', 'USD', 'CHF', 'KWD']) {
      expect((await api('POST', '/v1/orders', { body: { currency, total: 1 } })).status).toBe(201);
    }
  });

  it('metadata: string values, at most 50 keys, key 40 and value 500 characters', async () => {
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    const bad = [{ a: 1 }, { a: null }, many, { ['k'.repeat(41)]: 'v' }, { a: 'v'.repeat(501) }, ['x'], 'x'];
    for (const metadata of bad) {
      expectProblem(
        await api('POST', '/v1/orders', { body: { currency: 'EUR', total: 1, metadata } }),
        400,
        'validation_failed',
      );
    }
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'v'.repeat(500)]));
    const ok = await api('POST', '/v1/orders', { body: { currency: 'EUR', total: 1, metadata: fifty } });
    expect(ok.status).toBe(201);
    expect(Object.keys(ok.body.metadata ?? {})).toHaveLength(50);
  });
});

describe('ids and tenancy', () => {
  it('malformed, overlong and foreign ids answer 404, never 500', async () => {
    const paths = ['/v1/orders/', '/v1/payments/', '/v1/payment-methods/', '/v1/subscriptions/'];
    const ids = ['x', 'ord_', `ord_${'a'.repeat(300)}`, '%F0%9F%98%80', "ord_'or'1'='1", 'pay_..%2f..'];
    for (const base of paths) {
      for (const id of ids) {
        const answer = await api('GET', `${base}${id}`);
        // 404 for an id that cannot exist; 400 validation_failed for one beyond the length bound.
        expect([400, 404], `${base}${id}`).toContain(answer.status);
      }
    }
    for (const id of ids) {
      expect([400, 404]).toContain((await api('DELETE', `/v1/orders/${id}`)).status);
      expect([400, 404]).toContain((await api('POST', `/v1/orders/${id}/cancel`)).status);
      expect([400, 404]).toContain((await api('GET', `/v1/orders/${id}/refunds`)).status);
      expect([400, 404]).toContain(
        (await api('PATCH', `/v1/subscriptions/${id}`, { body: { plan: 'x' } })).status,
      );
    }
  });

  it("another account's payment method, order and subscription are 404 or 422 exactly like absent ones", async () => {
    const foreignCard = String((await card(KEYS.other)).body.id);
    const foreignOrder = String(
      (await api('POST', '/v1/orders', { key: KEYS.other, body: { currency: 'EUR', total: 10 } })).body.id,
    );
    const foreignSub = await api('POST', '/v1/subscriptions', {
      key: KEYS.other,
      body: { paymentMethod: foreignCard, plan: 'pro' },
    });
    expect(foreignSub.status).toBe(201);
    const subId = String(foreignSub.body.id);

    expect((await api('GET', `/v1/payment-methods/${foreignCard}`)).status).toBe(404);
    expect((await api('DELETE', `/v1/payment-methods/${foreignCard}`)).status).toBe(404);
    expect((await api('GET', `/v1/subscriptions/${subId}`)).status).toBe(404);
    expect((await api('POST', `/v1/subscriptions/${subId}/cancel`)).status).toBe(404);
    expect((await api('PATCH', `/v1/orders/${foreignOrder}`, { body: { description: 'x' } })).status).toBe(
      404,
    );
    expect((await api('POST', `/v1/orders/${foreignOrder}/refunds`, { body: { amount: 1 } })).status).toBe(
      404,
    );

    const payForeignCard = await api('POST', '/v1/payments', {
      headers: { 'idempotency-key': 'res-foreign-card' },
      body: { amount: 10, currency: 'EUR', paymentMethod: foreignCard },
    });
    const payAbsentCard = await api('POST', '/v1/payments', {
      headers: { 'idempotency-key': 'res-absent-card' },
      body: { amount: 10, currency: 'EUR', paymentMethod: 'pm_doesnotexist000000000000' },
    });
    expect(payForeignCard.status).toBe(payAbsentCard.status);
    expect(payForeignCard.body.code).toBe(payAbsentCard.body.code);

    const ownCard = String((await card()).body.id);
    const payForeignOrder = await api('POST', '/v1/payments', {
      headers: { 'idempotency-key': 'res-foreign-order' },
      body: { amount: 10, currency: 'EUR', paymentMethod: ownCard, order: foreignOrder },
    });
    expect([404, 422]).toContain(payForeignOrder.status);

    const subForeignCard = await api('POST', '/v1/subscriptions', {
      body: { paymentMethod: foreignCard, plan: 'pro' },
    });
    expect([404, 422]).toContain(subForeignCard.status);
  });
});

describe('refunds', () => {
  it('sum of refunds never exceeds the total; 422 refund_exceeds_amount; ids re_; list paginates', async () => {
    const order = await api('POST', '/v1/orders', { body: { currency: 'EUR', total: 100 } });
    const id = String(order.body.id);
    for (const amount of [0, -5, 1.5, '10', 2 ** 60]) {
      const answer = await api('POST', `/v1/orders/${id}/refunds`, { body: { amount } });
      expect(answer.status, String(amount)).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
    }
    for (let i = 0; i < 3; i += 1) {
      const answer = await api('POST', `/v1/orders/${id}/refunds`, { body: { amount: 30 } });
      expect(answer.status).toBe(201);
      expect(String(answer.body.id)).toMatch(/^re_/);
    }
    expectProblem(
      await api('POST', `/v1/orders/${id}/refunds`, { body: { amount: 11 } }),
      422,
      'refund_exceeds_amount',
    );
    expect((await api('POST', `/v1/orders/${id}/refunds`, { body: { amount: 10 } })).status).toBe(201);
    expectProblem(
      await api('POST', `/v1/orders/${id}/refunds`, { body: { amount: 1 } }),
      422,
      'refund_exceeds_amount',
    );

    const first = await api('GET', `/v1/orders/${id}/refunds?limit=2`);
    expect(first.status).toBe(200);
    const data = first.body.data as unknown as unknown[];
    expect(data).toHaveLength(2);
    const next = first.body.pageInfo?.nextCursor;
    expect(typeof next).toBe('string');
    const second = await api(
      'GET',
      `/v1/orders/${id}/refunds?limit=2&cursor=${encodeURIComponent(String(next))}`,
    );
    expect((second.body.data as unknown as unknown[]).length).toBe(2);
    expectProblem(await api('GET', `/v1/orders/${id}/refunds?sort=-nope`), 400, 'invalid_sort');
  });
});

describe('list errors on every resource', () => {
  it('invalid_sort, too_many_sort_keys, invalid_cursor, clamped limits and unknown parameters', async () => {
    for (const base of ['/v1/orders', '/v1/payments', '/v1/payment-methods', '/v1/subscriptions']) {
      expectProblem(await api('GET', `${base}?sort=bogus`), 400, 'invalid_sort');
      expectProblem(
        await api('GET', `${base}?sort=createdAt,-createdAt,createdAt,createdAt`),
        400,
        'too_many_sort_keys',
      );
      expectProblem(await api('GET', `${base}?cursor=garbage`), 400, 'invalid_cursor');
      for (const limit of ['0', '101', 'abc', '1.5', '99999999999999999999']) {
        // SPEC: limits are clamped (missing, non-numeric or zero gives 20; above 100 becomes 100).
        const answer = await api('GET', `${base}?limit=${limit}`);
        expect(answer.status, `${base}?limit=${limit}`).toBe(200);
        expect((answer.body.data as unknown as unknown[]).length).toBeLessThanOrEqual(100);
      }
      expectProblem(await api('GET', `${base}?colour=red`), 400, 'unknown_field');
      expect((await api('GET', `${base}?limit=100`)).status).toBe(200);
    }
  });

  it('a cursor from one list or account is not accepted by another', async () => {
    for (let i = 0; i < 3; i += 1)
      await api('POST', '/v1/orders', { body: { currency: 'EUR', total: i + 1 } });
    const page = await api('GET', '/v1/orders?limit=1');
    const cursor = encodeURIComponent(String(page.body.pageInfo?.nextCursor));
    expectProblem(await api('GET', `/v1/payments?cursor=${cursor}`), 400, 'invalid_cursor');
    expectProblem(
      await api('GET', `/v1/orders?cursor=${cursor}`, { key: KEYS.other }),
      400,
      'invalid_cursor',
    );
    expectProblem(await api('GET', `/v1/orders?limit=1&sort=total&cursor=${cursor}`), 400, 'invalid_cursor');
  });
});

describe('subscriptions and payment methods validation', () => {
  it('plan 1-64 characters, quantity an integer from 1, default 1; canceled cannot change', async () => {
    const pm = String((await card()).body.id);
    for (const body of [
      { paymentMethod: pm, plan: '' },
      { paymentMethod: pm, plan: 'p'.repeat(65) },
      { paymentMethod: pm, plan: 'p', quantity: 0 },
      { paymentMethod: pm, plan: 'p', quantity: 1.5 },
      { paymentMethod: pm, plan: 'p', quantity: '2' },
      { paymentMethod: pm, plan: 'p', quantity: 2 ** 60 },
      { plan: 'p' },
    ]) {
      const answer = await api('POST', '/v1/subscriptions', { body });
      expect(answer.status, JSON.stringify(body)).toBe(400);
    }
    const sub = await api('POST', '/v1/subscriptions', { body: { paymentMethod: pm, plan: 'p'.repeat(64) } });
    expect(sub.status).toBe(201);
    expect(sub.body.quantity).toBe(1);
    expect(sub.body.status).toBe('active');
    const id = String(sub.body.id);
    expect(id).toMatch(/^sub_/);
    expectProblem(
      await api('PATCH', `/v1/subscriptions/${id}`, { body: { status: 'canceled' } }),
      400,
      'unknown_field',
    );
    const patched = await api('PATCH', `/v1/subscriptions/${id}`, {
      body: { quantity: 3, metadata: { a: 'b' } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.quantity).toBe(3);
    expect((await api('POST', `/v1/subscriptions/${id}/cancel`)).body.status).toBe('canceled');
    expectProblem(
      await api('PATCH', `/v1/subscriptions/${id}`, { body: { plan: 'x' } }),
      409,
      'invalid_state_transition',
    );
  });

  it('payment methods accept only the descriptive card fields', async () => {
    const base = { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 };
    for (const body of [
      { type: 'bank', card: base },
      { type: 'card', card: { ...base, number: '4242424242424242' } },
      { type: 'card', card: { ...base, last4: '42' } },
      { type: 'card', card: { ...base, expMonth: 13 } },
      { type: 'card', card: { ...base, expMonth: 1.5 } },
      { type: 'card' },
    ]) {
      const answer = await api('POST', '/v1/payment-methods', { body });
      expect(answer.status, JSON.stringify(body)).toBe(400);
    }
    const ok = await card();
    expect(ok.status).toBe(201);
    expect(String(ok.body.id)).toMatch(/^pm_/);
    expect(ok.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});

describe('payments idempotency edges', () => {
  it('required key 400; replay same body; reuse 422; money validated before the key is stored', async () => {
    const pm = String((await card()).body.id);
    const body = { amount: 500, currency: 'EUR', paymentMethod: pm };
    expectProblem(await api('POST', '/v1/payments', { body }), 400, 'idempotency_key_required');
    const bad = await api('POST', '/v1/payments', {
      headers: { 'idempotency-key': 'res-pay-1' },
      body: { ...body, amount: 1.25 },
    });
    expectProblem(bad, 400, 'validation_failed');
    const first = await api('POST', '/v1/payments', { headers: { 'idempotency-key': 'res-pay-1' }, body });
    expect(first.status).toBe(201);
    expect(String(first.body.id)).toMatch(/^pay_/);
    const replay = await api('POST', '/v1/payments', { headers: { 'idempotency-key': 'res-pay-1' }, body });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expectProblem(
      await api('POST', '/v1/payments', {
        headers: { 'idempotency-key': 'res-pay-1' },
        body: { ...body, amount: 501 },
      }),
      422,
      'idempotency_key_reused',
    );
    // The same key in another account is another key.
    const otherPm = String((await card(KEYS.other)).body.id);
    const other = await api('POST', '/v1/payments', {
      key: KEYS.other,
      headers: { 'idempotency-key': 'res-pay-1' },
      body: { ...body, paymentMethod: otherPm },
    });
    expect(other.status).toBe(201);
    expect(other.headers.get('idempotent-replayed')).toBeNull();
  });
});
