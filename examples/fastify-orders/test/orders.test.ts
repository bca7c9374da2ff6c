import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrdersApp } from '../src/app';
import { migrate } from '../src/migrations';
import { ORDER_STATUSES, type Order } from '../src/orders';
import { openTestPool, type TestPool } from './database';

const keyring = { current: 'k1', keys: { k1: 'fastify-orders-example-secret-000001' } };
// Five instants in turn: orders created together share a createdAt, so sorts meet ties.
const T0 = Date.UTC(2026, 10, 26, 12, 0, 0, 123);
let tick = 0;
const now = () => T0 + (tick++ % 5) * 60_000;

let db: TestPool;
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  db = await openTestPool();
  await migrate(db.pool);
  app = createOrdersApp({ pool: db.pool, keyring, now });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await app.close();
  await db.close();
});

function post(account: string, body: unknown, key?: string): Promise<Response> {
  return fetch(`${base}/orders`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-account': account,
      ...(key === undefined ? {} : { 'idempotency-key': key }),
    },
    body: JSON.stringify(body),
  });
}

function list(account: string, query: Record<string, string>): Promise<Response> {
  return fetch(`${base}/orders?${new URLSearchParams(query)}`, { headers: { 'x-account': account } });
}

async function countOrders(account: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    'select count(*)::int as n from orders where account_id = $1',
    [account],
  );
  return rows[0]?.n ?? 0;
}

async function expectProblem(
  response: Response,
  status: number,
  code: string,
): Promise<Record<string, unknown>> {
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = (await response.json()) as Record<string, unknown>;
  expect(body.code).toBe(code);
  expect(response.status).toBe(status);
  return body;
}

describe('POST /orders with Idempotency-Key', () => {
  it('creates once: the same key and body again replays the answer with Idempotent-Replayed: true', async () => {
    const first = await post('acct_idem', { customer: 'cus_1', total: 4200 }, 'key-1');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const created = (await first.json()) as Order;
    expect(first.headers.get('location')).toBe(`/orders/${created.id}`);
    expect(created).toMatchObject({ customer: 'cus_1', total: 4200, status: 'pending' });

    // Key order and spacing differ: the same request by its canonical JSON.
    const again = await post('acct_idem', { total: 4200, customer: 'cus_1' }, 'key-1');
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('location')).toBe(`/orders/${created.id}`);
    expect(await again.json()).toEqual(created);
    expect(await countOrders('acct_idem')).toBe(1);

    const shown = await fetch(`${base}/orders/${created.id}`, { headers: { 'x-account': 'acct_idem' } });
    expect(await shown.json()).toEqual(created);
  });

  it('refuses the same key with another body (422), no key (400), and writes nothing', async () => {
    expect((await post('acct_reuse', { customer: 'cus_1', total: 100 }, 'key-2')).status).toBe(201);
    await expectProblem(
      await post('acct_reuse', { customer: 'cus_1', total: 101 }, 'key-2'),
      422,
      'idempotency_key_reused',
    );
    await expectProblem(
      await post('acct_reuse', { customer: 'cus_1', total: 100 }),
      400,
      'idempotency_key_required',
    );
    expect(await countOrders('acct_reuse')).toBe(1);
    // Keys are scoped to the account: another account's key-2 is a new request.
    expect((await post('acct_other', { customer: 'cus_1', total: 101 }, 'key-2')).status).toBe(201);
  });

  it('validates before claiming: a 400 stores nothing, and the key then serves a valid body', async () => {
    const invalid = await expectProblem(
      await post('acct_valid', { customer: '', total: -1, colour: 'red' }, 'key-3'),
      400,
      'validation_failed',
    );
    expect((invalid.errors as { field: string }[]).map((error) => error.field).sort()).toEqual([
      'colour',
      'customer',
      'total',
    ]);
    expect((await post('acct_valid', { customer: 'cus_2', total: 0 }, 'key-3')).status).toBe(201);
    expect(await countOrders('acct_valid')).toBe(1);
  });

  it('creates exactly once when the same request arrives several times at once', async () => {
    // A repeat that arrives while the first still runs is told so (409 with Retry-After); one
    // that arrives after it committed replays its answer. Either way: one order, one fresh 201.
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => post('acct_race', { customer: 'cus_3', total: 700 }, 'key-4')),
    );
    for (const answer of answers) {
      expect([201, 409]).toContain(answer.status);
      if (answer.status === 409) expect(answer.headers.get('retry-after')).not.toBeNull();
    }
    const created = answers.filter((answer) => answer.status === 201);
    const fresh = created.filter((answer) => answer.headers.get('idempotent-replayed') !== 'true');
    expect(fresh).toHaveLength(1);
    const ids = new Set(
      await Promise.all(created.map(async (answer) => ((await answer.json()) as Order).id)),
    );
    expect(ids.size).toBe(1);
    const retried = await post('acct_race', { customer: 'cus_3', total: 700 }, 'key-4');
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(((await retried.json()) as Order).id).toBe([...ids][0]);
    expect(await countOrders('acct_race')).toBe(1);
  });
});

describe('GET /orders, keyset pages', () => {
  const ACCOUNT = 'acct_walk';
  const orders: Order[] = [];

  beforeAll(async () => {
    // 50 orders with ties everywhere: 5 instants, 7 totals, 4 statuses, 4 customers.
    for (let i = 0; i < 50; i += 1) {
      const body = {
        customer: `cus_${i % 4}`,
        total: (i % 7) * 100,
        status: ORDER_STATUSES[i % ORDER_STATUSES.length],
      };
      const answer = await post(ACCOUNT, body, `walk-${i}`);
      expect(answer.status).toBe(201);
      orders.push((await answer.json()) as Order);
    }
  });

  type Field = 'createdAt' | 'total' | 'status' | 'customer';
  const value = (order: Order, field: Field): number | string =>
    field === 'status' ? ORDER_STATUSES.indexOf(order.status) : order[field];

  /** The order the service promises: the sort's keys, then the id descending. */
  function expected(sort: string): string[] {
    const keys = sort.split(',').map((term) => ({
      field: term.replace(/^-/, '') as Field,
      sign: term.startsWith('-') ? -1 : 1,
    }));
    return [...orders]
      .sort((a, b) => {
        for (const { field, sign } of keys) {
          const x = value(a, field);
          const y = value(b, field);
          if (x !== y) return (x < y ? -1 : 1) * sign;
        }
        return a.id < b.id ? 1 : -1;
      })
      .map((order) => order.id);
  }

  async function walk(sort: string | undefined, limit: number): Promise<string[]> {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 60; page += 1) {
      const query: Record<string, string> = { limit: String(limit) };
      if (sort !== undefined) query.sort = sort;
      if (cursor !== null) query.cursor = cursor;
      const answer = await list(ACCOUNT, query);
      expect(answer.status).toBe(200);
      const body = (await answer.json()) as {
        data: Order[];
        pageInfo: { nextCursor: string | null; hasMore: boolean };
      };
      expect(body.data.length).toBeLessThanOrEqual(limit);
      seen.push(...body.data.map((order) => order.id));
      expect(body.pageInfo.hasMore).toBe(body.pageInfo.nextCursor !== null);
      cursor = body.pageInfo.nextCursor;
      if (cursor === null) return seen;
    }
    throw new Error('the walk did not end');
  }

  it('walks every allowed sort, at any page size, returning each order once in the promised order', async () => {
    const term = fc
      .tuple(fc.constantFrom<Field>('createdAt', 'total', 'status', 'customer'), fc.boolean())
      .map(([field, descending]) => ({ field, descending }));
    const sort = fc
      .uniqueArray(term, { minLength: 1, maxLength: 3, selector: (t) => t.field })
      .map((terms) => terms.map((t) => `${t.descending ? '-' : ''}${t.field}`).join(','));
    await fc.assert(
      fc.asyncProperty(sort, fc.integer({ min: 3, max: 20 }), async (sortParameter, limit) => {
        const ids = await walk(sortParameter, limit);
        expect(new Set(ids).size).toBe(50);
        expect(ids).toEqual(expected(sortParameter));
      }),
      { numRuns: 12 },
    );
  });

  it('defaults to -createdAt, counts with include=total, and filters by status', async () => {
    expect(await walk(undefined, 50)).toEqual(expected('-createdAt'));
    const counted = await list(ACCOUNT, { include: 'total', limit: '5', status: 'paid' });
    const body = (await counted.json()) as { data: Order[]; pageInfo: { totalCount: number } };
    expect(body.pageInfo.totalCount).toBe(orders.filter((order) => order.status === 'paid').length);
    expect(body.data.every((order) => order.status === 'paid')).toBe(true);
  });

  it('answers 400 problem+json for a sort not allowed, a bad cursor, or a cursor of another list', async () => {
    await expectProblem(await list(ACCOUNT, { sort: 'colour' }), 400, 'invalid_sort');
    await expectProblem(await list(ACCOUNT, { sort: 'total;drop table orders' }), 400, 'invalid_sort');
    await expectProblem(await list(ACCOUNT, { cursor: 'not-a-cursor' }), 400, 'invalid_cursor');
    const first = (await (await list(ACCOUNT, { sort: 'total', limit: '5' })).json()) as {
      pageInfo: { nextCursor: string };
    };
    const cursor = first.pageInfo.nextCursor;
    // Bound to its sort and its account: elsewhere it is refused, never misread.
    await expectProblem(await list(ACCOUNT, { sort: '-total', cursor }), 400, 'invalid_cursor');
    await expectProblem(await list('acct_idem', { sort: 'total', cursor }), 400, 'invalid_cursor');
    await expectProblem(
      await list(ACCOUNT, { sort: 'total', cursor: `${cursor.slice(0, -2)}AA` }),
      400,
      'invalid_cursor',
    );
    await expectProblem(await list(ACCOUNT, { colour: 'red' }), 400, 'validation_failed');
    await expectProblem(
      await fetch(`${base}/orders?sort=total&sort=-total`, { headers: { 'x-account': ACCOUNT } }),
      400,
      'validation_failed',
    );
    expect((await list(ACCOUNT, { limit: '1000' })).status).toBe(200); // clamped to 100, not refused
  });
});

describe('the rest of the service', () => {
  it('answers problems for no account (401), an unknown order (404), another path (404) and another method (405)', async () => {
    await expectProblem(await fetch(`${base}/orders`), 401, 'unauthenticated');
    await expectProblem(
      await fetch(`${base}/orders/ord_missing`, { headers: { 'x-account': 'acct_idem' } }),
      404,
      'not_found',
    );
    await expectProblem(await fetch(`${base}/elsewhere`), 404, 'not_found');
    const wrongMethod = await fetch(`${base}/orders`, { method: 'DELETE' });
    await expectProblem(wrongMethod, 405, 'method_not_allowed');
    expect(wrongMethod.headers.get('allow')).toBe('GET, HEAD, POST');
  });
});
