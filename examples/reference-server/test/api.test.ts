import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASYNC_THRESHOLD } from '../src/resources/payments/schema';
import { type Answer, call, KEYS, startTestServer, type TestServer } from './api-harness';

// The core resources over real HTTP (CONTRACT sections 1 to 5 and 7): auth, strictness, lists,
// the order lifecycle with refunds, payments with idempotency and 202, payment methods and
// subscriptions. One server for the file keeps it cheap.

let t: TestServer;
const api = (method: string, path: string, options?: Parameters<typeof call>[3]) =>
  call(t.url, method, path, options);

beforeAll(async () => {
  t = await startTestServer({ HOLDFAST_PAYMENT_SETTLE_DELAY: '200ms' });
});
afterAll(async () => {
  await t?.stop();
});

function expectProblem(answer: Answer, status: number, code: string): void {
  expect(answer.status).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body.code).toBe(code);
  expect(answer.body.status).toBe(status);
  expect(answer.body.requestId).toBe(answer.headers.get('request-id'));
  expect(String(answer.body.type)).toMatch(new RegExp(`/problems/${code}$`));
}

const newOrder = async (total = 5000, currency = 'EUR') => {
  const answer = await api('POST', '/v1/orders', { body: { currency, total, description: 'test' } });
  expect(answer.status).toBe(201);
  return answer;
};
const newCard = async (last4 = '4242') => {
  const answer = await api('POST', '/v1/payment-methods', {
    body: { type: 'card', card: { brand: 'visa', last4, expMonth: 12, expYear: 2030 } },
  });
  expect(answer.status).toBe(201);
  return String(answer.body.id);
};

describe('authentication and tenancy', () => {
  it('401 unauthenticated with WWW-Authenticate for a missing, malformed or unknown key, never 403', async () => {
    for (const key of [null, 'not-a-key', 'hf_test_doesNotExist000000000000000']) {
      const answer = await api('GET', '/v1/orders', { key });
      expectProblem(answer, 401, 'unauthenticated');
      // RFC 6750 section 3: an error code only when a key was presented.
      expect(answer.headers.get('www-authenticate')).toBe(
        key === null ? 'Bearer realm="holdfast"' : 'Bearer realm="holdfast", error="invalid_token"',
      );
    }
    expectProblem(await api('POST', '/v1/payments', { key: null, body: {} }), 401, 'unauthenticated');
  });

  it('403 forbidden for a missing scope; read implied by nothing else', async () => {
    expect((await api('GET', '/v1/orders', { key: KEYS.ordersRead })).status).toBe(200);
    expectProblem(
      await api('POST', '/v1/orders', { key: KEYS.ordersRead, body: { currency: 'EUR', total: 1 } }),
      403,
      'forbidden',
    );
    const forbidden = await api('GET', '/v1/payments', { key: KEYS.ordersRead });
    expectProblem(forbidden, 403, 'forbidden');
    expect(forbidden.headers.get('www-authenticate')).toBe(
      'Bearer realm="holdfast", error="insufficient_scope", scope="payments:read"',
    );
  });

  it("another account's resource is 404 exactly like an absent one", async () => {
    const id = String((await newOrder()).body.id);
    const theirs = await api('GET', `/v1/orders/${id}`, { key: KEYS.other });
    const absent = await api('GET', '/v1/orders/ord_absent', { key: KEYS.other });
    expectProblem(theirs, 404, 'not_found');
    expect({ ...theirs.body, instance: null, requestId: null }).toEqual({
      ...absent.body,
      instance: null,
      requestId: null,
    });
    expectProblem(await api('POST', `/v1/orders/${id}/cancel`, { key: KEYS.other }), 404, 'not_found');
    const list = await api('GET', '/v1/orders', { key: KEYS.other });
    expect(list.body.data).toEqual([]);
  });
});

describe('strictness', () => {
  it('unknown body fields and query parameters are 400 unknown_field naming each', async () => {
    const body = await api('POST', '/v1/orders', {
      body: { currency: 'EUR', total: 1, colour: 'red', size: 2 },
    });
    expectProblem(body, 400, 'unknown_field');
    expect(body.body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'colour', code: 'unknown_field', pointer: '#/colour' }),
        expect.objectContaining({ field: 'size', code: 'unknown_field' }),
      ]),
    );
    const query = await api('GET', '/v1/orders?expand=x');
    expectProblem(query, 400, 'unknown_field');
    expect(query.body.errors).toEqual([expect.objectContaining({ field: 'expand', code: 'unknown_field' })]);
    expectProblem(await api('GET', '/v1/orders/ord_x?expand=x'), 400, 'unknown_field');
    expectProblem(
      await api('POST', '/v1/payments?debug=1', {
        body: { amount: 1, currency: 'EUR', paymentMethod: 'pm_x' },
        headers: { 'idempotency-key': 'strict-1' },
      }),
      400,
      'unknown_field',
    );
  });

  it('other validation errors are 400 validation_failed with field entries', async () => {
    const answer = await api('POST', '/v1/orders', { body: { currency: 'XYZ', total: 1.5 } });
    expectProblem(answer, 400, 'validation_failed');
    const fields = (answer.body.errors as unknown as { field: string; pointer: string }[]).map(
      (e) => e.field,
    );
    expect(fields).toEqual(expect.arrayContaining(['currency', 'total']));
    expectProblem(
      await api('POST', '/v1/orders', { body: { currency: 'eur', total: 1 } }),
      400,
      'validation_failed',
    );
    expectProblem(await api('POST', '/v1/orders'), 400, 'validation_failed');
    const empty = { body: '', headers: { 'content-type': 'application/json' } };
    expectProblem(await api('POST', '/v1/subscriptions', empty), 400, 'validation_failed');
    expectProblem(await api('PATCH', '/v1/orders/ord_x', empty), 400, 'validation_failed');
  });

  it('a query parameter given twice is 400 validation_failed that says so, on every list', async () => {
    for (const path of ['/v1/orders', '/v1/payments', '/v1/subscriptions', '/v1/deliveries', '/v1/events']) {
      for (const [name, a, b] of [
        ['limit', '1', '2'],
        ['sort', 'createdAt', '-createdAt'],
      ]) {
        const answer = await api('GET', `${path}?${name}=${a}&${name}=${b}`);
        expectProblem(answer, 400, 'validation_failed');
        expect(answer.body.errors, path).toEqual([
          expect.objectContaining({ field: name, code: 'repeated', detail: 'given 2 times; give it once' }),
        ]);
        expect(answer.body.detail).toBe(`${name}: given 2 times; give it once`);
      }
    }
  });

  it('a NUL character (which PostgreSQL text cannot hold) is 404 in a path, 400 in a query or body', async () => {
    expectProblem(await api('GET', '/v1/orders/ord_%00x'), 404, 'not_found');
    expectProblem(await api('GET', '/v1/payments?order=x%00'), 400, 'validation_failed');
    const body = await api('POST', '/v1/orders', {
      body: '{"currency":"EUR","total":1,"metadata":{"k/1":"a\\u0000"}}',
    });
    expectProblem(body, 400, 'validation_failed');
    expect(body.body.errors).toEqual([
      expect.objectContaining({ field: 'metadata.k/1', pointer: '#/metadata/k~11' }),
    ]);
  });

  it('body guard: invalid_json 400, 415 for another media type, 413 over 1 MiB', async () => {
    expectProblem(await api('POST', '/v1/orders', { body: '{"total":' }), 400, 'invalid_json');
    expectProblem(
      await api('POST', '/v1/orders', { body: 'total=1', headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    );
    const big = JSON.stringify({ currency: 'EUR', total: 1, description: 'x'.repeat(1024 * 1024) });
    expectProblem(await api('POST', '/v1/orders', { body: big }), 413, 'payload_too_large');
  });

  it('405 with Allow for a known path under another method', async () => {
    const answer = await api('PUT', '/v1/orders');
    expectProblem(answer, 405, 'method_not_allowed');
    expect(answer.headers.get('allow')).toMatch(/GET/);
  });
});

describe('lists', () => {
  it('paginates orders with a cursor bound to sort and filter, sorted by the allowlist', async () => {
    const totals = [300, 100, 200];
    for (const total of totals) await newOrder(total, 'JPY');
    const first = await api('GET', '/v1/orders?limit=2&sort=total&include=total');
    expect(first.status).toBe(200);
    expect(first.body.pageInfo?.hasMore).toBe(true);
    expect(typeof first.body.pageInfo?.totalCount).toBe('number');
    const cursor = String(first.body.pageInfo?.nextCursor);
    const second = await api('GET', `/v1/orders?limit=2&sort=total&cursor=${encodeURIComponent(cursor)}`);
    expect(second.status).toBe(200);
    const all = [
      ...(first.body.data as unknown as { total: number }[]),
      ...(second.body.data as unknown as { total: number }[]),
    ].map((o) => o.total);
    expect(all).toEqual([...all].sort((a, b) => a - b));
    expectProblem(
      await api('GET', `/v1/orders?limit=2&sort=-total&cursor=${encodeURIComponent(cursor)}`),
      400,
      'invalid_cursor',
    );
    expectProblem(
      await api('GET', `/v1/orders?sort=total&cursor=${encodeURIComponent(cursor)}`, { key: KEYS.other }),
      400,
      'invalid_cursor',
    );
    expectProblem(await api('GET', '/v1/orders?cursor=garbage'), 400, 'invalid_cursor');
  });

  it('sort errors: invalid_sort names the key, too_many_sort_keys above 3', async () => {
    const bad = await api('GET', '/v1/orders?sort=colour');
    expectProblem(bad, 400, 'invalid_sort');
    expect(String(bad.body.detail)).toContain('colour');
    expectProblem(await api('GET', '/v1/orders?sort=total,total'), 400, 'invalid_sort');
    expectProblem(await api('GET', '/v1/orders?sort=a,b,c,d'), 400, 'too_many_sort_keys');
    expectProblem(await api('GET', '/v1/orders?status=lost'), 400, 'validation_failed');
    const pending = await api('GET', '/v1/orders?status=pending&sort=status,-createdAt&limit=500');
    expect(pending.status).toBe(200);
    expect((pending.body.data as unknown as { status: string }[]).every((o) => o.status === 'pending')).toBe(
      true,
    );
  });
});

describe('orders', () => {
  it('create, fetch with ETag, PATCH with If-Match, ship, refund, and 409s', async () => {
    const created = await newOrder(10_000);
    const id = String(created.body.id);
    expect(id).toMatch(/^ord_/);
    expect(created.headers.get('location')).toBe(`/v1/orders/${id}`);
    expect(created.body).toMatchObject({
      status: 'pending',
      total: 10_000,
      currency: 'EUR',
      amountRefunded: 0,
    });
    expect(String(created.body.createdAt)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const got = await api('GET', `/v1/orders/${id}`);
    const etag = String(got.headers.get('etag'));
    const patched = await api('PATCH', `/v1/orders/${id}`, {
      body: { description: 'renamed' },
      headers: { 'if-match': etag },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.description).toBe('renamed');
    expectProblem(
      await api('PATCH', `/v1/orders/${id}`, {
        body: { description: 'stale' },
        headers: { 'if-match': etag },
      }),
      409,
      'version_conflict',
    );
    expectProblem(
      await api('PATCH', `/v1/orders/${id}`, { body: { status: 'cancelled' } }),
      409,
      'invalid_state_transition',
    );
    const shipped = await api('PATCH', `/v1/orders/${id}`, { body: { status: 'shipped' } });
    expect(shipped.body.status).toBe('shipped');
    expectProblem(await api('POST', `/v1/orders/${id}/cancel`), 409, 'invalid_state_transition');
    expectProblem(await api('DELETE', `/v1/orders/${id}`), 409, 'invalid_state_transition');

    const refund = await api('POST', `/v1/orders/${id}/refunds`, {
      body: { amount: 6000, reason: 'damaged' },
      headers: { 'idempotency-key': `refund-${id}` },
    });
    expect(refund.status).toBe(201);
    expect(refund.body).toMatchObject({ amount: 6000, currency: 'EUR', order: id });
    expect(refund.headers.get('location')).toBe(`/v1/orders/${id}/refunds`);
    const replay = await api('POST', `/v1/orders/${id}/refunds`, {
      body: { amount: 6000, reason: 'damaged' },
      headers: { 'idempotency-key': `refund-${id}` },
    });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.id).toBe(refund.body.id);
    const over = await api('POST', `/v1/orders/${id}/refunds`, { body: { amount: 4001 } });
    expectProblem(over, 422, 'refund_exceeds_amount');
    expect(over.body.errors).toEqual([expect.objectContaining({ field: 'amount', pointer: '#/amount' })]);
    expect((await api('POST', `/v1/orders/${id}/refunds`, { body: { amount: 4000 } })).status).toBe(201);
    const refunds = await api('GET', `/v1/orders/${id}/refunds`);
    expect(refunds.body.data).toHaveLength(2);
    expect((await api('GET', `/v1/orders/${id}`)).body.amountRefunded).toBe(10_000);

    const events = await t.server.db.query<{ type: string }>(
      'select type from holdfast_events where resource_id = $1 order by sequence',
      [id],
    );
    expect(events.map((e) => e.type)).toEqual([
      'order.created',
      'order.updated',
      'order.updated',
      'order.refunded',
      'order.refunded',
    ]);
  });

  it('cancel is repeatable; DELETE only while pending, then 404', async () => {
    const cancelled = String((await newOrder()).body.id);
    expect((await api('POST', `/v1/orders/${cancelled}/cancel`)).body.status).toBe('cancelled');
    const again = await api('POST', `/v1/orders/${cancelled}/cancel`);
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('cancelled');
    expectProblem(
      await api('POST', `/v1/orders/${cancelled}/refunds`, { body: { amount: 1 } }),
      409,
      'invalid_state_transition',
    );
    const refundable = String((await newOrder()).body.id);
    expect((await api('POST', `/v1/orders/${refundable}/refunds`, { body: { amount: 1 } })).status).toBe(201);
    expectProblem(await api('DELETE', `/v1/orders/${refundable}`), 409, 'invalid_state_transition');

    const pending = String((await newOrder()).body.id);
    const deleted = await fetch(`${t.url}/v1/orders/${pending}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${KEYS.all}` },
    });
    expect(deleted.status).toBe(204);
    expect(deleted.headers.get('request-id')).toMatch(/^req_/);
    expectProblem(await api('DELETE', `/v1/orders/${pending}`), 404, 'not_found');
  });

  it('POST /orders accepts Idempotency-Key: replay, reuse with another body', async () => {
    const headers = { 'idempotency-key': 'order-key-1' };
    const first = await api('POST', '/v1/orders', { body: { currency: 'USD', total: 1 }, headers });
    const second = await api('POST', '/v1/orders', { body: { currency: 'USD', total: 1 }, headers });
    expect(second.body.id).toBe(first.body.id);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.headers.get('request-id')).not.toBe(first.headers.get('request-id'));
    expectProblem(
      await api('POST', '/v1/orders', { body: { currency: 'USD', total: 2 }, headers }),
      422,
      'idempotency_key_reused',
    );
  });
});

describe('payments', () => {
  it('requires Idempotency-Key; settles at once with 201, replays without charging again', async () => {
    const pm = await newCard();
    const body = { amount: 2500, currency: 'EUR', paymentMethod: pm };
    expectProblem(await api('POST', '/v1/payments', { body }), 400, 'idempotency_key_required');
    const headers = { 'idempotency-key': `pay-${pm}` };
    const first = await api('POST', '/v1/payments', { body, headers });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ status: 'succeeded', amount: 2500, paymentMethod: pm, order: null });
    expect(first.headers.get('location')).toBe(`/v1/payments/${String(first.body.id)}`);
    const replay = await api('POST', '/v1/payments', { body, headers });
    expect(replay.status).toBe(201);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expectProblem(
      await api('POST', '/v1/payments', { body: { ...body, amount: 2501 }, headers }),
      422,
      'idempotency_key_reused',
    );
    const [count] = await t.server.db.query<{ n: number }>(
      'select count(*)::int as n from holdfast_payments where payment_method_id = $1',
      [pm],
    );
    expect(count?.n).toBe(1);
    const listed = await api('GET', `/v1/payments?status=succeeded&sort=-amount,createdAt`);
    expect(listed.status).toBe(200);
    expectProblem(await api('GET', '/v1/payments?sort=total'), 400, 'invalid_sort');
  });

  it('a large amount answers 202 with Location (processing) and settles later; a 0002 card fails', async () => {
    const pm = await newCard('0002');
    const order = await newOrder(ASYNC_THRESHOLD + 1);
    const accepted = await api('POST', '/v1/payments', {
      body: { amount: ASYNC_THRESHOLD + 1, currency: 'EUR', paymentMethod: pm, order: String(order.body.id) },
      headers: { 'idempotency-key': `later-${pm}` },
    });
    expect(accepted.status).toBe(202);
    expect(accepted.body.status).toBe('processing');
    const location = String(accepted.headers.get('location'));
    expect(location).toBe(`/v1/payments/${String(accepted.body.id)}`);
    let status = 'processing';
    for (let i = 0; i < 50 && status === 'processing'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = String((await api('GET', location)).body.status);
    }
    expect(status).toBe('failed');
    const settled = await api('GET', location);
    expect(settled.body.failureReason).toBe('card_declined');
    const events = await t.server.db.query<{ type: string }>(
      'select type from holdfast_events where resource_id = $1',
      [String(accepted.body.id)],
    );
    expect(events.map((e) => e.type)).toEqual(['payment.failed']);
    const byOrder = await api('GET', `/v1/payments?order=${String(order.body.id)}`);
    expect(byOrder.body.data).toHaveLength(1);
  });

  it('422 unprocessable for an unknown payment method or an order in another currency', async () => {
    const missing = await api('POST', '/v1/payments', {
      body: { amount: 1, currency: 'EUR', paymentMethod: 'pm_nope' },
      headers: { 'idempotency-key': 'unknown-pm' },
    });
    expectProblem(missing, 422, 'unprocessable');
    expect(missing.body.errors).toEqual([expect.objectContaining({ field: 'paymentMethod' })]);
    const pm = await newCard();
    const order = String((await newOrder(100, 'GBP')).body.id);
    expectProblem(
      await api('POST', '/v1/payments', {
        body: { amount: 1, currency: 'EUR', paymentMethod: pm, order },
        headers: { 'idempotency-key': 'wrong-currency' },
      }),
      422,
      'unprocessable',
    );
  });
});

describe('payment methods and subscriptions', () => {
  it('payment methods: create, get, list, delete, repeat delete 404; no card number accepted', async () => {
    const pm = await newCard();
    expect((await api('GET', `/v1/payment-methods/${pm}`)).body.card).toMatchObject({ last4: '4242' });
    expectProblem(
      await api('POST', '/v1/payment-methods', {
        body: {
          type: 'card',
          card: { brand: 'visa', last4: '4242', expMonth: 1, expYear: 2030, number: '4242424242424242' },
        },
      }),
      400,
      'unknown_field',
    );
    expect((await api('GET', '/v1/payment-methods')).status).toBe(200);
    expect((await api('DELETE', `/v1/payment-methods/${pm}`)).status).toBe(204);
    expectProblem(await api('DELETE', `/v1/payment-methods/${pm}`), 404, 'not_found');
    expectProblem(await api('GET', `/v1/payment-methods/${pm}`), 404, 'not_found');
  });

  it('subscriptions: created, updated, canceled (repeatable), events emitted', async () => {
    const pm = await newCard();
    const created = await api('POST', '/v1/subscriptions', { body: { paymentMethod: pm, plan: 'pro' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'active', quantity: 1, plan: 'pro', canceledAt: null });
    const id = String(created.body.id);
    expect(created.headers.get('location')).toBe(`/v1/subscriptions/${id}`);
    expectProblem(
      await api('PATCH', `/v1/subscriptions/${id}`, { body: { quantity: 0 } }),
      400,
      'validation_failed',
    );
    expectProblem(
      await api('PATCH', `/v1/subscriptions/${id}`, { body: { plan: '' } }),
      400,
      'validation_failed',
    );
    const updated = await api('PATCH', `/v1/subscriptions/${id}`, { body: { quantity: 3 } });
    expect(updated.body.quantity).toBe(3);
    expect((await api('POST', `/v1/subscriptions/${id}/cancel`)).body.status).toBe('canceled');
    expect((await api('POST', `/v1/subscriptions/${id}/cancel`)).status).toBe(200);
    expectProblem(
      await api('PATCH', `/v1/subscriptions/${id}`, { body: { quantity: 4 } }),
      409,
      'invalid_state_transition',
    );
    const list = await api('GET', '/v1/subscriptions?sort=status');
    expect(list.status).toBe(200);
    const events = await t.server.db.query<{ type: string; sequence: string }>(
      'select type, sequence from holdfast_events where resource_id = $1 order by sequence',
      [id],
    );
    expect(events.map((e) => e.type)).toEqual([
      'subscription.created',
      'subscription.updated',
      'subscription.updated',
    ]);
    expectProblem(
      await api('POST', '/v1/subscriptions', { body: { paymentMethod: 'pm_nope', plan: 'pro' } }),
      422,
      'unprocessable',
    );
  });
});

describe('OpenAPI', () => {
  it('declares the resource paths with the sort keys of the allowlist', async () => {
    const answer = await api('GET', '/openapi.json', { key: null });
    const paths = answer.body.paths ?? {};
    for (const path of [
      '/v1/orders',
      '/v1/orders/{id}',
      '/v1/orders/{id}/cancel',
      '/v1/orders/{id}/refunds',
      '/v1/payments',
      '/v1/payments/{id}',
      '/v1/payment-methods',
      '/v1/payment-methods/{id}',
      '/v1/subscriptions',
      '/v1/subscriptions/{id}',
      '/v1/subscriptions/{id}/cancel',
    ]) {
      expect(paths[path], path).toBeDefined();
    }
    expect(JSON.stringify(paths['/v1/orders']?.get)).toContain('createdAt');
    expect(paths['/v1/payments']?.post?.responses?.['202']).toBeDefined();
  });
});

describe('pages outside /v1', () => {
  it('/healthz, /docs (self-contained HTML), /problems/{code}', async () => {
    expect((await api('GET', '/healthz', { key: null })).body.status).toBe('ok');
    const docs = await fetch(`${t.url}/docs`);
    expect(docs.status).toBe(200);
    const html = await docs.text();
    expect(html).toContain('/v1/orders');
    expect(html).not.toMatch(/<script[^>]+src=["']https?:/);
    expect(html).not.toMatch(/<link[^>]+href=["']https?:/);
    const page = await fetch(`${t.url}/problems/refund_exceeds_amount`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expectProblem(await api('GET', '/problems/no_such_code', { key: null }), 404, 'not_found');
    for (const code of [
      'header_fields_too_large',
      'malformed_request',
      'request_timeout',
      'unauthenticated',
    ]) {
      const documented = await fetch(`${t.url}/problems/${code}`);
      expect(documented.status, code).toBe(200);
      expect(await documented.text()).toContain(`https://holdfast.dev/problems/${code}`);
    }
    // Inherited members are no codes.
    expectProblem(await api('GET', '/problems/constructor', { key: null }), 404, 'not_found');
  });

  it('/ sends a browser to the dashboard', async () => {
    const root = await fetch(`${t.url}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/dashboard');
  });

  it('what Node refuses before any route (headers over 16 KiB, malformed HTTP) is problem+json with Request-Id', async () => {
    const { port } = new URL(t.url);
    const exchange = (bytes: string) =>
      new Promise<string>((resolve) => {
        const socket = connect(Number(port), '127.0.0.1', () => socket.end(bytes));
        let raw = '';
        socket.on('data', (chunk) => {
          raw += chunk.toString('latin1');
        });
        socket.on('error', () => resolve(raw));
        socket.on('close', () => resolve(raw));
      });
    const cases: [bytes: string, status: number, code: string, instance?: string][] = [
      [
        `GET /v1/orders?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
        431,
        'header_fields_too_large',
        '/v1/orders',
      ],
      ['GET /v1/orders HTTP/1.1\r\nHost x\r\n\r\n', 400, 'malformed_request', '/v1/orders'],
      // RFC 9112 section 3.2: an HTTP/1.1 request without Host is a 400.
      ['GET /v1/orders HTTP/1.1\r\nConnection: close\r\n\r\n', 400, 'malformed_request', '/v1/orders'],
      [
        'GET /v1\\orders HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
        400,
        'malformed_request',
        '/v1\\orders',
      ],
      [
        'GET /v1/orders HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n',
        400,
        'malformed_request',
        '/v1/orders',
      ],
      ['GET * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 400, 'malformed_request'],
    ];
    for (const [bytes, status, code, instance] of cases) {
      const raw = await exchange(bytes);
      const [head = '', body = ''] = raw.split('\r\n\r\n');
      expect(head, code).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(head).toMatch(/\r\ncontent-type: application\/problem\+json\r\n/i);
      const requestId = /\r\nrequest-id: (req_\S+)/i.exec(head)?.[1];
      expect(requestId, bytes.slice(0, 40)).toMatch(/^req_/);
      const problem = JSON.parse(body);
      expect(problem).toMatchObject({ status, code, requestId });
      expect(problem.instance).toBe(instance);
    }
  });
});

describe('HOLDFAST_IDEMPOTENCY_RETENTION_HOURS', () => {
  it('keeps a stored answer as long as configured, so the purge deletes it only after', async () => {
    const kept = await startTestServer({ HOLDFAST_IDEMPOTENCY_RETENTION_HOURS: '72' });
    try {
      const answer = await call(kept.url, 'POST', '/v1/orders', {
        body: { currency: 'EUR', total: 10 },
        headers: { 'idempotency-key': 'retention-72' },
      });
      expect(answer.status).toBe(201);
      const [row] = await kept.server.db.query<{ seconds: number }>(
        `select extract(epoch from expires_at - created_at)::int as seconds
         from holdfast_idempotency_keys where key = 'retention-72'`,
      );
      // Exactly 72 h from the claim: both are set from one reading of the clock (24 h was the
      // default), so no allowance for the request's own duration.
      expect(row?.seconds).toBe(72 * 3600);
    } finally {
      await kept.stop();
    }
  });
});
