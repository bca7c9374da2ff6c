import { fromPostgres } from '@holdfast/db/postgres';
import { type DoorCase, runDoors } from '@holdfast/doors-test';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import * as problemsExpress from '@holdfast/problem-details/express';
import * as problemsFastify from '@holdfast/problem-details/fastify';
import * as problemsHono from '@holdfast/problem-details/hono';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as expressDoor from '../src/express';
import * as fastifyDoor from '../src/fastify';
import * as honoDoor from '../src/hono';
import { type Keyring, type ListQuery, type Page, paginate, parseListQuery } from '../src/index';

// One list, served through every door: each door only reads the query from its framework's
// request; the core checks it and the Db-boundary paginate answers from real PostgreSQL.
const orderSort = defineSortAllowlist({
  fields: {
    createdAt: { column: 'created_at', type: 'timestamp' },
    total: { column: 'total', type: 'number' },
  },
  id: { column: 'id' },
  default: '-createdAt',
});
const keyring: Keyring = { current: 'k1', keys: { k1: 'doors-cursor-key-doors-cursor-key-01' } };
const MAX = 4;

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ max: 2 });
  await db.sql`create table orders (id text primary key, account_id text not null,
    created_at timestamptz(3) not null, total bigint not null)`;
  // ord_1 is the oldest and the largest: the two sorts order the rows in opposite ways.
  await db.sql`insert into orders select 'ord_' || n, 'acct_1', timestamptz '2026-11-22' + n * interval '1 s',
    (10 - n) * 100 from generate_series(1, 5) as n`;
});
afterAll(async () => {
  await db.close();
});

interface Order {
  id: string;
  total: number;
}

const optionsFor = (account: string) => ({
  allowlist: orderSort,
  keyring,
  binding: { account, resource: 'orders' },
  maxLimit: MAX,
});

/** The route's own part, the same behind every door: the page for a checked query. */
function list(account: string, query: ListQuery): Promise<Page<Order>> {
  return paginate(fromPostgres(db.sql), {
    from: 'orders',
    where: { text: 'account_id = $1', values: [account] },
    allowlist: orderSort,
    binding: { account, resource: 'orders' },
    keyring,
    map: (row) => ({ id: String(row.id), total: Number(row.total) }),
    ...query.params,
  });
}

const accountOf = (value: string | string[] | undefined) => (typeof value === 'string' ? value : 'acct_1');
const ids = (...n: number[]) => n.map((i) => ({ id: `ord_${i}` }));
const cursorOf = (previous: unknown): string => {
  const cursor = (previous as Page<Order> | undefined)?.pageInfo.nextCursor;
  if (typeof cursor !== 'string')
    throw new Error(`the case before gave no cursor: ${JSON.stringify(previous)}`);
  return encodeURIComponent(cursor);
};
/** The cursor with one character of its signed JSON changed: still base64url, no longer signed. */
const tampered = (previous: unknown): string => {
  const text = Buffer.from(decodeURIComponent(cursorOf(previous)), 'base64url').toString('utf8');
  const altered = text.replace('"ord_', '"ord_9');
  return Buffer.from(altered, 'utf8').toString('base64url');
};

const cases: DoorCase[] = [
  {
    name: 'the first page is the default sort, the envelope with a next cursor',
    path: '/orders?limit=2',
    expect: {
      status: 200,
      body: { data: ids(5, 4), pageInfo: { hasMore: true, nextCursor: expect.any(String) } },
    },
  },
  {
    name: 'the next cursor gives the next page',
    path: (previous) => `/orders?limit=2&cursor=${cursorOf(previous)}`,
    expect: { status: 200, body: { data: ids(3, 2), pageInfo: { hasMore: true } } },
  },
  {
    name: 'the last page has no next cursor',
    path: (previous) => `/orders?limit=2&cursor=${cursorOf(previous)}`,
    expect: { status: 200, body: { data: ids(1), pageInfo: { hasMore: false, nextCursor: null } } },
  },
  {
    name: 'an allowed sort field orders the page',
    path: '/orders?sort=total&limit=2',
    expect: { status: 200, body: { data: ids(5, 4), pageInfo: { hasMore: true } } },
  },
  {
    name: 'a cursor follows its own sort',
    path: (previous) => `/orders?sort=total&limit=2&cursor=${cursorOf(previous)}`,
    expect: { status: 200, body: { data: ids(3, 2) } },
  },
  {
    name: 'a limit above the maximum is clamped, not refused',
    path: '/orders?limit=500',
    expect: { status: 200, body: { data: ids(5, 4, 3, 2), pageInfo: { hasMore: true } } },
  },
  {
    name: 'a limit below 1 is clamped to 1',
    path: '/orders?limit=-5',
    expect: { status: 200, body: { data: ids(5), pageInfo: { hasMore: true } } },
  },
  {
    name: 'a limit that is not a number gives the default, within the maximum',
    path: '/orders?limit=abc',
    expect: { status: 200, body: { data: ids(5, 4, 3, 2) } },
  },
  {
    name: 'a limit given twice is 400 repeated',
    path: '/orders?limit=1&limit=2',
    expect: {
      status: 400,
      code: 'validation_failed',
      body: { errors: [{ field: 'limit', code: 'repeated' }] },
    },
  },
  {
    name: 'include=total adds the count',
    path: '/orders?include=total&limit=1',
    expect: { status: 200, body: { pageInfo: { totalCount: 5, totalCountCapped: false } } },
  },
  {
    name: 'an unknown include is 400 validation_failed',
    path: '/orders?include=everything',
    expect: {
      status: 400,
      code: 'validation_failed',
      body: { errors: [{ field: 'include', code: 'invalid_include' }] },
    },
  },
  {
    name: 'a sort field outside the allowlist is 400 invalid_sort',
    path: '/orders?sort=account_id',
    expect: { status: 400, code: 'invalid_sort', body: { instance: '/orders' } },
  },
  {
    name: 'more than three sort keys is 400 too_many_sort_keys',
    path: '/orders?sort=total,createdAt,-total,-createdAt',
    expect: { status: 400, code: 'too_many_sort_keys' },
  },
  {
    name: 'a cursor that is not one is 400 invalid_cursor',
    path: '/orders?cursor=not-a-cursor',
    expect: {
      status: 400,
      code: 'invalid_cursor',
      body: { errors: [{ field: 'cursor', code: 'invalid_cursor' }] },
    },
  },
  {
    name: 'a tampered cursor is 400 invalid_cursor',
    before: [{ path: '/orders?limit=1' }],
    path: (previous) => `/orders?limit=1&cursor=${tampered(previous)}`,
    expect: { status: 400, code: 'invalid_cursor', body: { detail: expect.stringMatching(/altered/) } },
  },
  {
    name: 'a cursor issued for another sort is 400 invalid_cursor',
    before: [{ path: '/orders?limit=1' }],
    path: (previous) => `/orders?sort=total&cursor=${cursorOf(previous)}`,
    expect: { status: 400, code: 'invalid_cursor', body: { detail: expect.stringMatching(/another sort/) } },
  },
  {
    name: 'a cursor issued for another account is 400 invalid_cursor',
    before: [{ path: '/orders?limit=1' }],
    path: (previous) => `/orders?limit=1&cursor=${cursorOf(previous)}`,
    headers: { 'x-account': 'acct_2' },
    expect: { status: 400, code: 'invalid_cursor' },
  },
  {
    name: "another account's list is its own",
    path: '/orders',
    headers: { 'x-account': 'acct_2' },
    expect: { status: 200, body: { data: [], pageInfo: { hasMore: false, nextCursor: null } } },
  },
];

const quiet = { log: () => {} };

function honoApp(): Hono {
  const app = new Hono();
  app.onError(problemsHono.onProblem(quiet));
  app.get('/orders', async (c) => {
    const account = accountOf(c.req.header('x-account'));
    const query = await honoDoor.listQuery(c, optionsFor(account));
    return c.json(await list(account, query));
  });
  return app;
}

function expressApp(): express.Express {
  const app = express();
  app.get('/orders', async (req, res) => {
    const account = accountOf(req.headers['x-account']);
    const query = await expressDoor.listQuery(req, optionsFor(account));
    res.json(await list(account, query));
  });
  app.use(problemsExpress.onProblem(quiet));
  return app;
}

function fastifyApp() {
  const app = Fastify();
  app.setErrorHandler(problemsFastify.onProblem(quiet));
  app.get('/orders', async (request) => {
    const account = accountOf(request.headers['x-account']);
    const query = await fastifyDoor.listQuery(request, optionsFor(account));
    return list(account, query);
  });
  return app;
}

// A bare Fetch handler (Next.js, Bun, Deno, Workers) calls the core with the URL.
async function fetchHandler(request: Request): Promise<Response> {
  const account = request.headers.get('x-account') ?? 'acct_1';
  const query = await parseListQuery(new URL(request.url), optionsFor(account));
  return Response.json(await list(account, query));
}

runDoors('cursor-pagination', cases, {
  hono: honoApp,
  express: expressApp,
  fastify: fastifyApp,
  fetch: () => fetchHandler,
});

describe('parseListQuery', () => {
  it('reads a record of raw values as a URL, and refuses a nested one', async () => {
    const options = optionsFor('acct_1');
    const query = await parseListQuery({ sort: '-total', limit: ['3'] }, options);
    expect(query.params).toEqual({ sort: '-total', limit: 3, cursor: undefined, include: undefined });
    expect(query.after).toBeUndefined();
    await expect(parseListQuery({ sort: { a: 'b' } }, options)).rejects.toMatchObject({
      code: 'validation_failed',
    });
  });

  it('refuses a maxLimit outside 1 to 100 when called, before any request is read', async () => {
    for (const maxLimit of [0, 101, 2.5]) {
      await expect(parseListQuery(new URLSearchParams(), { ...optionsFor('a'), maxLimit })).rejects.toThrow(
        RangeError,
      );
    }
  });
});
