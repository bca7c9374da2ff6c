// bench/server: our full middleware stack against a bare Hono + postgres.js handler running the
// same queries, in one run, on real PostgreSQL (issue 8). Target: our stack costs at most 25%
// of the bare throughput.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//     npx tsx --conditions=@holdfast/source bench/server/run.ts [seconds]
import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import autocannon from 'autocannon';
import { Hono } from 'hono';
import postgres from 'postgres';
import { startServer } from '../../examples/reference-server/src/server';

const base = process.env.DATABASE_URL;
if (!base) {
  console.error('bench/server needs DATABASE_URL (a real PostgreSQL).');
  process.exit(1);
}
const seconds = Number(process.argv[2] ?? 5);
const schema = `bench_server_${randomBytes(4).toString('hex')}`;
const admin = postgres(base, { max: 1, onnotice: () => {} });
await admin.unsafe(`create schema ${schema}`);
const url = new URL(base);
url.searchParams.set('options', `-c search_path=${schema}`);

const KEY = `hf_test_${randomBytes(18).toString('base64url')}`;
const ACCOUNT = 'acct_bench';
const ours = await startServer({
  env: {
    DATABASE_URL: url.toString(),
    PORT: '0',
    NODE_ENV: 'test',
    HOLDFAST_ROLE: 'api',
    HOLDFAST_API_KEYS: JSON.stringify([{ key: KEY, account: ACCOUNT, scopes: ['*'] }]),
    HOLDFAST_RATE_LIMIT: '10000000/1s',
  },
});

// Seed through the API so both sides read the same rows.
for (let i = 0; i < 200; i += 1) {
  const response = await fetch(`${ours.url}/v1/orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ currency: 'EUR', total: 1000 + i, description: `seed ${i}` }),
  });
  if (response.status !== 201) throw new Error(`seeding failed: ${response.status} ${await response.text()}`);
}

// The bare handler: the same list and insert queries, no auth, validation, cursors or idempotency.
const sql = postgres(url.toString(), { max: 10, onnotice: () => {} });
const bare = new Hono();
bare.get('/v1/orders', async (c) => {
  const rows = await sql`
    select * from holdfast_orders where account_id = ${ACCOUNT}
    order by created_at desc, id desc limit 21`;
  return c.json({ data: rows.slice(0, 20), pageInfo: { nextCursor: null, hasMore: rows.length > 20 } });
});
bare.post('/v1/orders', async (c) => {
  const body = await c.req.json<{ currency: string; total: number; description?: string }>();
  const now = new Date();
  const [row] = await sql`
    insert into holdfast_orders (id, account_id, status, currency, total, description, created_at, updated_at)
    values (${`ord_${randomBytes(16).toString('base64url')}`}, ${ACCOUNT}, 'pending', ${body.currency}, ${body.total},
            ${body.description ?? null}, ${now}, ${now})
    returning *`;
  return c.json(row, 201);
});
const bareServer = serve({ fetch: bare.fetch, port: 0, hostname: '127.0.0.1' });
await new Promise<void>((resolve) => bareServer.once('listening', () => resolve()));
const bareUrl = `http://127.0.0.1:${(bareServer.address() as AddressInfo).port}`;

type Result = autocannon.Result;

async function load(target: string, method: 'GET' | 'POST', idempotent: boolean): Promise<Result> {
  const body = JSON.stringify({ currency: 'EUR', total: 4200, description: 'bench' });
  const headers: Record<string, string> = { authorization: `Bearer ${KEY}` };
  if (method === 'POST') headers['content-type'] = 'application/json';
  const request: autocannon.Request = { method, headers };
  if (method === 'POST') request.body = body;
  if (idempotent) {
    request.setupRequest = (req) => ({
      ...req,
      headers: { ...req.headers, 'idempotency-key': randomUUID() },
    });
  }
  const result = await autocannon({
    url: `${target}/v1/orders`,
    connections: 10,
    duration: seconds,
    requests: [request],
  });
  return result;
}

const rows: string[] = [];
for (const [label, method, idempotent] of [
  ['GET /v1/orders', 'GET', false],
  ['POST /v1/orders (fresh Idempotency-Key)', 'POST', true],
] as const) {
  const theirs = await load(bareUrl, method, false);
  const mine = await load(ours.url, method, idempotent);
  const cost = 1 - mine.requests.average / theirs.requests.average;
  rows.push(
    `| ${label} | ${theirs.requests.average.toFixed(0)} | ${theirs.latency.p99} | ${mine.requests.average.toFixed(0)} | ${mine.latency.p99} | ${(cost * 100).toFixed(1)}% | ${mine.non2xx + mine.errors + theirs.non2xx + theirs.errors} |`,
  );
}

console.log(
  `\nPostgreSQL ${(await sql`show server_version`)[0]?.server_version}, ${seconds} s per run, 10 connections, one process each\n`,
);
console.log(
  '| request | bare req/s | bare p99 ms | Holdfast req/s | Holdfast p99 ms | cost of our stack | non-2xx/errors |',
);
console.log('|---|--:|--:|--:|--:|--:|--:|');
for (const row of rows) console.log(row);
console.log(
  '\nTarget: the cost of our stack (auth, rate limit, validation, signed cursors, idempotency, outbox) at most 25%.',
);

await ours.close();
await new Promise<void>((resolve) => bareServer.close(() => resolve()));
await sql.end();
await admin.unsafe(`drop schema ${schema} cascade`);
await admin.end();
