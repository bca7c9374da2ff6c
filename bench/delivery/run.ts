// Deliveries per second to a fast local receiver with one and two workers, and what
// enqueueEvent adds to a business transaction (issue 7, "Must show"). Usage:
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//     npx tsx --conditions=@holdfast/source bench/delivery/run.ts
// One process: the receiver (answers 204 at once), the workers (each with its own pool of 10
// connections) and the enqueuer. Runs in a fresh schema, dropped at the end.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import {
  createDeliveryWorker,
  createEndpoint,
  enqueueEvent,
  schema,
} from '@holdfast/webhook-delivery/postgres';
import postgres from 'postgres';

const EVENTS = Number(process.env.EVENTS ?? 2000);
const TXS = Number(process.env.TXS ?? 300);
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error('bench/delivery needs DATABASE_URL (a real PostgreSQL)');
  process.exit(1);
}
const benchSchema = `bench_delivery_${randomBytes(4).toString('hex')}`;
const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
await admin.unsafe(`create schema ${benchSchema}`);
const url = new URL(databaseUrl);
url.searchParams.set('options', `-c search_path=${benchSchema}`);
const pool = () => postgres(url.toString(), { max: 10, onnotice: () => {} });
const sql = pool();
await sql.unsafe(schema);
await sql`create table bench_orders (id text primary key, body jsonb not null, created_at timestamptz not null)`;

let received = 0;
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    received += 1;
    res.statusCode = 204;
    res.end();
  });
});
const port: number = await new Promise<number>((resolve) =>
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    resolve(typeof address === 'object' && address ? address.port : 0);
  }),
);

async function deliveriesPerSecond(workers: number): Promise<number> {
  const account = `acct_${workers}`;
  await createEndpoint(
    sql,
    { account, url: `http://127.0.0.1:${port}/hook` },
    { allowPrivateDestinations: true },
  );
  await sql.begin(async (tx) => {
    for (let i = 0; i < EVENTS; i++) {
      await enqueueEvent(tx, {
        account,
        type: 'order.created',
        resourceId: `ord_${workers}_${i}`,
        object: { id: i },
      });
    }
  });
  const pools = Array.from({ length: workers }, pool);
  const running = pools.map((p) =>
    createDeliveryWorker({
      sql: p,
      allowPrivateDestinations: true,
      concurrency: 32,
      perEndpointConcurrency: 32,
      pollMs: 10,
    }),
  );
  const start = performance.now();
  for (const w of running) w.start();
  for (;;) {
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from holdfast_deliveries where account_id = ${account} and status = 'succeeded'`;
    if ((row?.n ?? 0) >= EVENTS) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const seconds = (performance.now() - start) / 1000;
  await Promise.all(running.map((w) => w.stop()));
  await Promise.all(pools.map((p) => p.end()));
  return EVENTS / seconds;
}

async function enqueueCost(): Promise<{ alone: number; withEvent: number }> {
  await createEndpoint(
    sql,
    { account: 'acct_tx', url: `http://127.0.0.1:${port}/hook` },
    { allowPrivateDestinations: true },
  );
  const alone: number[] = [];
  const withEvent: number[] = [];
  for (let i = 0; i < TXS; i++) {
    for (const kind of i % 2 ? ['alone', 'event'] : ['event', 'alone']) {
      const id = `ord_${kind}_${i}`;
      const t = performance.now();
      await sql.begin(async (tx) => {
        const now = new Date();
        await tx`insert into bench_orders (id, body, created_at) values (${id}, ${tx.json({ id, amount: 500 })}, ${now})`;
        if (kind === 'event') {
          await enqueueEvent(tx, {
            account: 'acct_tx',
            type: 'order.created',
            resourceId: id,
            object: { id, amount: 500 },
          });
        }
      });
      (kind === 'event' ? withEvent : alone).push(performance.now() - t);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  return { alone: median(alone), withEvent: median(withEvent) };
}

try {
  const one = await deliveriesPerSecond(1);
  const two = await deliveriesPerSecond(2);
  const cost = await enqueueCost();
  console.log(
    `\n${EVENTS} events to one fast local receiver (204 at once), perEndpointConcurrency 32, concurrency 32 per worker\n`,
  );
  console.log('| Workers | Deliveries/s |');
  console.log('|---|---|');
  console.log(`| 1 | ${one.toFixed(0)} |`);
  console.log(`| 2 | ${two.toFixed(0)} |`);
  console.log(
    `\nBusiness transaction (begin, insert one order, commit), median of ${TXS}, one subscribed endpoint\n`,
  );
  console.log('| Transaction | Median ms |');
  console.log('|---|---|');
  console.log(`| insert alone | ${cost.alone.toFixed(2)} |`);
  console.log(`| insert + enqueueEvent | ${cost.withEvent.toFixed(2)} |`);
  console.log(`| enqueueEvent adds | ${(cost.withEvent - cost.alone).toFixed(2)} |`);
  console.log(`\n(receiver got ${received} requests)`);
} finally {
  server.close();
  await sql.end();
  await admin.unsafe(`drop schema ${benchSchema} cascade`);
  await admin.end();
}
