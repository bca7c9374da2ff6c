// What endpoints with nothing to send cost a webhook's latency: outbox insert to receipt at
// RATE events/s to one endpoint, beside 0 other endpoints (the baseline) and beside IDLE
// endpoints just made, whose turns have come and which have nothing to lease (as every endpoint
// served and gone idle has, until a worker's repair moves its turn later). Each mode on a fresh
// database, in one run, alternating, ROUNDS times; one worker as the reference server runs it
// (a pool of 10 shared with the inserts, a `postgresListener`). The first second of each run is
// reported apart: it holds the pool's connections opening and each one's first plans.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx --conditions=@holdfast/source bench/delivery/idle.ts
//   IDLE (1000), RATE (200), SECONDS (10), ROUNDS (3), IDLE_DB (holdfast_bench_idle)
//
// Ends with: idle: <n> idle endpoints: p50 <ms> ms, p99 <ms> ms after the first second (alone <ms> and <ms> ms)
import { createServer } from 'node:http';
import { migrate } from '@holdfast/db/migrate';
import { fromPostgres, postgresListener } from '@holdfast/db/postgres';
import * as delivery from '@holdfast/webhook-delivery';
import postgres from 'postgres';
import { summary } from '../summary';

const IDLE = Number(process.env.IDLE ?? 1_000);
const RATE = Number(process.env.RATE ?? 200);
const SECONDS = Number(process.env.SECONDS ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const serverUrl = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const dbName = process.env.IDLE_DB ?? 'holdfast_bench_idle';
if (!/^[a-z_][a-z0-9_]*$/.test(dbName) || `/${dbName}` === serverUrl.pathname) {
  console.error(
    `bench/delivery idle: IDLE_DB ${JSON.stringify(dbName)} must be a plain identifier, not DATABASE_URL's`,
  );
  process.exit(1);
}
const target = new URL(serverUrl);
target.pathname = `/${dbName}`;
const admin = postgres(serverUrl.toString(), { max: 1, onnotice: () => {} });

const arrivals = new Map<number, number>();
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const n = /"n":(\d+)/.exec(Buffer.concat(chunks).toString())?.[1];
    if (n !== undefined && !arrivals.has(Number(n))) arrivals.set(Number(n), performance.now());
    res.statusCode = 204;
    res.end();
  });
});
server.keepAliveTimeout = 60_000;
const port = await new Promise<number>((resolve) =>
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    resolve(typeof address === 'object' && address ? address.port : 0);
  }),
);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

interface Run {
  idle: number;
  p50: number;
  p99: number;
  firstSecondP99: number;
  restP50: number;
  restP99: number;
}

async function measure(idle: number): Promise<Run> {
  await admin.unsafe(`drop database if exists ${dbName}`);
  await admin.unsafe(`create database ${dbName}`);
  const sql = postgres(target.toString(), { max: 10, onnotice: () => {} });
  const listen = postgres(target.toString(), { max: 1, onnotice: () => {} });
  const db = fromPostgres(sql);
  try {
    await migrate(db, delivery.migrations());
    const options = { allowPrivateDestinations: true, concurrencyMax: 200 };
    for (let i = 0; i < idle; i += 1) {
      await delivery.createEndpoint(
        db,
        { account: 'acct_idle', url: `http://127.0.0.1:${port}/idle/${i}`, eventTypes: ['bench.never'] },
        options,
      );
    }
    await delivery.createEndpoint(
      db,
      { account: 'acct_timed', url: `http://127.0.0.1:${port}/timed`, eventTypes: ['bench.timed'] },
      options,
    );
    await sql.unsafe('vacuum analyze');
    arrivals.clear();
    const worker = delivery.createDeliveryWorker({
      db,
      listener: postgresListener(listen),
      allowPrivateDestinations: true,
      concurrency: 128,
      perEndpointConcurrency: 200,
      pollMs: 100,
      onError: (error: unknown) => console.error('bench worker:', error),
    });
    worker.start();
    const total = RATE * SECONDS;
    const sentAt: number[] = [];
    const start = performance.now();
    const inserts: Promise<unknown>[] = [];
    for (let n = 0; n < total; n += 1) {
      const wait = start + (n * 1000) / RATE - performance.now();
      if (wait > 0) await sleep(wait);
      sentAt[n] = performance.now();
      inserts.push(
        delivery.enqueueEvent(db, {
          account: 'acct_timed',
          type: 'bench.timed',
          resourceId: `r_${n}`,
          object: { n },
        }),
      );
    }
    await Promise.all(inserts);
    const deadline = performance.now() + 30_000;
    while (arrivals.size < total && performance.now() < deadline) await sleep(10);
    await worker.stop();
    const latency = sentAt.map((at, n) => (arrivals.get(n) ?? Number.POSITIVE_INFINITY) - at);
    const first = latency.slice(0, RATE);
    const rest = latency.slice(RATE);
    return {
      idle,
      p50: percentile(latency, 50),
      p99: percentile(latency, 99),
      firstSecondP99: percentile(first, 99),
      restP50: percentile(rest, 50),
      restP99: percentile(rest, 99),
    };
  } finally {
    await sql.end();
    await listen.end();
    await admin.unsafe(`drop database if exists ${dbName}`);
  }
}

const runs: Run[] = [];
for (let round = 0; round < ROUNDS; round += 1) {
  for (const idle of [0, IDLE]) {
    const run = await measure(idle);
    runs.push(run);
    console.log(
      `  round ${round + 1}, ${idle} idle: p50 ${run.p50.toFixed(1)} ms, p99 ${run.p99.toFixed(1)} ms (first second ${run.firstSecondP99.toFixed(1)}, after it p50 ${run.restP50.toFixed(1)} p99 ${run.restP99.toFixed(1)})`,
    );
  }
}
await admin.end();
server.close();

console.log(
  `\n| Round | Idle endpoints | p50 (ms) | p99 (ms) | First second p99 (ms) | After it: p50 (ms) | After it: p99 (ms) |`,
);
console.log('|---|---|---|---|---|---|---|');
for (const [i, r] of runs.entries()) {
  console.log(
    `| ${Math.floor(i / 2) + 1} | ${r.idle} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.firstSecondP99.toFixed(1)} | ${r.restP50.toFixed(1)} | ${r.restP99.toFixed(1)} |`,
  );
}
const median = (values: number[]) => percentile(values, 50);
const alone = runs.filter((r) => r.idle === 0);
const beside = runs.filter((r) => r.idle === IDLE);
summary(
  import.meta.url,
  `idle: ${IDLE} idle endpoints: p50 ${median(beside.map((r) => r.restP50)).toFixed(1)} ms, p99 ${median(beside.map((r) => r.restP99)).toFixed(1)} ms after the first second (alone ${median(alone.map((r) => r.restP50)).toFixed(1)} and ${median(alone.map((r) => r.restP99)).toFixed(1)} ms)`,
);
