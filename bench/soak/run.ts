import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { startReferenceServer } from '../reference-server';
import { summary } from '../summary';

const base = process.env.DATABASE_URL;
if (!base) {
  console.error('bench/soak needs DATABASE_URL (a real PostgreSQL).');
  process.exit(1);
}
const seconds = Number(process.argv[2] ?? 30);
const schema = `bench_soak_${randomBytes(4).toString('hex')}`;
const admin = postgres(base, { max: 1, onnotice: () => {} });
await admin.unsafe(`create schema ${schema}`);
const databaseUrl = new URL(base);
databaseUrl.searchParams.set('options', `-c search_path=${schema}`);
const KEY = `hf_test_${randomBytes(18).toString('base64url')}`;

// The receiver: 204 at once, counting distinct Webhook-Ids, and when the last one came.
const received = new Set<string>();
let lastArrival = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const id = req.headers['webhook-id'];
    if (typeof id === 'string') received.add(id);
    lastArrival = performance.now();
    res.statusCode = 204;
    res.end();
  });
});
const receiverPort = await new Promise<number>((resolve) =>
  receiver.listen(0, '127.0.0.1', () => {
    const address = receiver.address();
    resolve(typeof address === 'object' && address ? address.port : 0);
  }),
);

const { child, url } = await startReferenceServer({
  DATABASE_URL: databaseUrl.toString(),
  HOLDFAST_API_KEYS: JSON.stringify([{ key: KEY, account: 'acct_soak', scopes: ['*'] }]),
  HOLDFAST_RATE_LIMIT: '1000000/1s',
  HOLDFAST_ALLOW_PRIVATE_DESTINATIONS: '1',
});

const rssMiB = () => {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
};
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

try {
  const endpoint = await fetch(`${url}/v1/webhook-endpoints`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ url: `http://127.0.0.1:${receiverPort}/hook`, eventTypes: ['order.created'] }),
  });
  if (endpoint.status !== 201) throw new Error(`endpoint: ${endpoint.status} ${await endpoint.text()}`);
  // Warm up (JIT, pools), then measure memory before the load.
  await autocannon({
    url: `${url}/v1/orders`,
    method: 'POST',
    headers,
    body: '{"currency":"EUR","total":100}',
    duration: 2,
    connections: 8,
  });
  const warmOrders = received.size;
  await new Promise((r) => setTimeout(r, 3_000));
  const rssBefore = rssMiB();

  const load = await autocannon({
    url: `${url}/v1/orders`,
    method: 'POST',
    headers,
    body: JSON.stringify({ currency: 'EUR', total: 4200, description: 'soak' }),
    duration: seconds,
    connections: 64,
  });
  const loadEnded = performance.now();
  const created = load['2xx'];
  const non2xx = load.non2xx + load.errors + load.timeouts;
  const deliveredAtLoadEnd = received.size;
  // Requests in flight when autocannon stopped still commit afterwards: count the orders again
  // until the count stops moving, and wait for every one's webhook (at most 10 minutes).
  const countOrders = async () =>
    Number((await admin.unsafe(`select count(*)::int as n from ${schema}.holdfast_orders`))[0]?.n ?? 0);
  let orders = await countOrders();
  const deadline = performance.now() + 600_000;
  for (;;) {
    while (received.size < orders && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const again = await countOrders();
    if (again === orders || performance.now() >= deadline) break;
    orders = again;
  }
  const drained = Math.max(0, (lastArrival - loadEnded) / 1000);
  const rssDrained = rssMiB();
  // V8 gives heap pages back only after a few idle seconds (its memory reducer), so RSS is read
  // again after 10 s of quiet; both are printed.
  await new Promise((r) => setTimeout(r, 10_000));
  const rssAfter = rssMiB();

  console.log(
    `\nbench/soak: the reference server as npm start runs it, PostgreSQL, ${seconds} s of POST /v1/orders (64 connections)`,
  );
  console.log(`machine load: ${readFileSync('/proc/loadavg', 'utf8').trim()}\n`);
  console.log('| what | value |');
  console.log('|---|---:|');
  console.log(`| orders created during the load (2xx) | ${created} |`);
  console.log(`| orders in the database (warm-up included) | ${orders} |`);
  console.log(`| non-2xx answers, errors and timeouts | ${non2xx} |`);
  console.log(`| orders/s | ${Math.round(load.requests.average)} |`);
  console.log(`| webhooks received when the load ended | ${deliveredAtLoadEnd - warmOrders} of ${created} |`);
  console.log(`| webhooks received in all (distinct ids) | ${received.size} |`);
  console.log(`| last webhook after the last order | ${drained.toFixed(1)} s |`);
  console.log(
    `| server RSS before / when drained / 10 s later | ${rssBefore.toFixed(0)} / ${rssDrained.toFixed(0)} / ${rssAfter.toFixed(0)} MiB (${(rssDrained / rssBefore).toFixed(2)}x, ${(rssAfter / rssBefore).toFixed(2)}x) |`,
  );
  const verdicts = [
    [
      `every order's webhook arrived (${received.size} distinct ids for ${orders} orders)`,
      received.size >= orders,
    ],
    [`the last arrived within 10 s of the last order (${drained.toFixed(1)} s)`, drained <= 10],
    [`0 non-2xx (${non2xx})`, non2xx === 0],
    [
      `server RSS after at most 1.5x before (${(rssAfter / rssBefore).toFixed(2)}x)`,
      rssAfter <= 1.5 * rssBefore,
    ],
  ] as const;
  console.log('');
  for (const [what, ok] of verdicts) console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  summary(
    import.meta.url,
    `soak: ${orders} orders, ${received.size} delivered, drained ${drained.toFixed(1)} s after load`,
  );
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  receiver.close();
  await admin.unsafe(`drop schema ${schema} cascade`);
  await admin.end();
}
