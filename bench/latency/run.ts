import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { Pool } from 'undici';
import { startThroughNpm } from '../reference-server';
import { summarise } from '../server/profile';
import { summary } from '../summary';

const base = process.env.DATABASE_URL;
if (!base) {
  console.error('bench/latency needs DATABASE_URL (a real PostgreSQL).');
  process.exit(1);
}
const rates = (process.env.LATENCY_RATES ?? '50,200,500,1000').split(',').map(Number);
const seconds = Number(process.env.LATENCY_SECONDS ?? 15);
const extraEnv = Object.fromEntries(
  (process.env.LATENCY_ENV ?? '')
    .split(',')
    .filter(Boolean)
    .map((pair) => pair.split('=') as [string, string]),
);
const schema = `bench_latency_${randomBytes(4).toString('hex')}`;
const admin = postgres(base, { max: 1, onnotice: () => {} });
await admin.unsafe(`create schema ${schema}`);
const databaseUrl = new URL(base);
databaseUrl.searchParams.set('options', `-c search_path=${schema}`);

/** Wall-clock ms (sub-millisecond), comparable with the server's trace. */
const wall = () => performance.timeOrigin + performance.now();
/** When each order's 201 came, and when its webhook arrived, by order id. */
const answeredAt = new Map<string, number>();
const arrivedAt = new Map<string, number>();
/** The event id of each order's webhook, for the trace. */
const eventOf = new Map<string, string>();
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const at = wall();
    res.statusCode = 204;
    res.end();
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      id?: string;
      data?: { object?: { id?: string } };
    };
    const id = body.data?.object?.id;
    if (id && !arrivedAt.has(id)) {
      arrivedAt.set(id, at);
      if (trace && body.id) eventOf.set(id, body.id);
    }
  });
});
const receiverPort = await new Promise<number>((resolve) =>
  receiver.listen(0, '127.0.0.1', () => {
    const address = receiver.address();
    resolve(typeof address === 'object' && address ? address.port : 0);
  }),
);

// As an outside user starts it: `npm start` with its development defaults (demo key and demo data
// on a fresh database, the demo's endpoints on its built-in receiver included), on PostgreSQL.
const trace = process.env.LATENCY_TRACE ? `/tmp/latency-trace-${schema}.jsonl` : undefined;
// LATENCY_PROFILE=<rate>: a CPU profile of the server while that rate is offered.
const profileRate = process.env.LATENCY_PROFILE ? Number(process.env.LATENCY_PROFILE) : undefined;
const profile = profileRate === undefined ? undefined : `/tmp/latency-profile-${schema}`;
const preload = `--import ${fileURLToPath(new URL('./loop-trace.mjs', import.meta.url))}`;
const server = await startThroughNpm({
  ...extraEnv,
  NODE_ENV: 'development',
  DATABASE_URL: databaseUrl.toString(),
  // The per-key limit would refuse the load; private destinations let the receiver be 127.0.0.1.
  HOLDFAST_RATE_LIMIT: '1000000/1s',
  HOLDFAST_ALLOW_PRIVATE_DESTINATIONS: '1',
  ...(trace || profile ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${preload}` } : {}),
  ...(trace ? { LATENCY_TRACE_FILE: trace } : {}),
  ...(profile ? { LATENCY_PROFILE_FILE: profile } : {}),
});
const { url } = server;
const KEY = server.demoKey;
if (!KEY) throw new Error('npm start printed no demo key: is the schema fresh?');
const origin = new URL(url).origin;
const pool = new Pool(origin, { connections: 128, pipelining: 1 });
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
const body = JSON.stringify({ currency: 'EUR', total: 4200, description: 'latency' });

/** Answers other than 201 (status and the start of the body, or the error), with counts. */
const statuses = new Map<string, number>();

/** Sends one order; records its id and when its 201 came, or counts a failure. */
async function order(failures: { n: number }): Promise<void> {
  try {
    const res = await pool.request({ path: '/v1/orders', method: 'POST', headers, body });
    const text = await res.body.text();
    const at = wall();
    if (res.statusCode !== 201) {
      failures.n += 1;
      const code = `${res.statusCode} ${text.slice(0, 120)}`;
      if (!statuses.has(code)) console.error(`first ${res.statusCode}: ${text.slice(0, 300)}`);
      statuses.set(code, (statuses.get(code) ?? 0) + 1);
      return;
    }
    answeredAt.set((JSON.parse(text) as { id: string }).id, at);
  } catch (error) {
    failures.n += 1;
    const code = `error ${error instanceof Error ? error.message : String(error)}`;
    statuses.set(code, (statuses.get(code) ?? 0) + 1);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (sorted: readonly number[], p: number) =>
  sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0);

interface Row {
  rate: number;
  achieved: number;
  orders: number;
  failures: number;
  lost: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Sends `rate` orders/s for `duration` seconds on schedule (open loop); resolves once all are answered. */
async function offer(rate: number, duration: number, failures: { n: number }): Promise<number> {
  const sends: Promise<void>[] = [];
  const start = performance.now();
  const total = Math.round(rate * duration);
  while (sends.length < total) {
    const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate) + 1);
    while (sends.length < due) sends.push(order(failures));
    await sleep(1);
  }
  await Promise.all(sends);
  return (performance.now() - start) / 1000;
}

/** Offers `rate` orders/s for `seconds`, then waits for their webhooks. */
async function measure(rate: number): Promise<Row> {
  answeredAt.clear();
  arrivedAt.clear();
  const failures = { n: 0 };
  const profiled = profile !== undefined && rate === profileRate;
  if (profiled) writeFileSync(`${profile}.start`, '');
  const elapsed = await offer(rate, seconds, failures);
  if (profiled) {
    writeFileSync(`${profile}.stop`, '');
    while (!existsSync(`${profile}.cpuprofile`)) await sleep(100);
    console.log(`\nthe server at ${rate}/s offered: ${summarise(`${profile}.cpuprofile`)}`);
  }
  // Lost: not arrived once nothing more has arrived for 10 s.
  let seen = arrivedAt.size;
  let quietSince = performance.now();
  while ([...answeredAt.keys()].some((id) => !arrivedAt.has(id)) && performance.now() - quietSince < 10_000) {
    await sleep(50);
    if (arrivedAt.size !== seen) {
      seen = arrivedAt.size;
      quietSince = performance.now();
    }
  }
  const delays: number[] = [];
  let lost = 0;
  for (const [id, at] of answeredAt) {
    const arrived = arrivedAt.get(id);
    if (arrived === undefined) lost += 1;
    else delays.push(arrived - at);
  }
  if (trace) traceSlowest(rate);
  delays.sort((a, b) => a - b);
  return {
    rate,
    achieved: answeredAt.size / elapsed,
    orders: answeredAt.size,
    failures: failures.n,
    lost,
    p50: percentile(delays, 0.5),
    p95: percentile(delays, 0.95),
    p99: percentile(delays, 0.99),
    max: delays.at(-1) ?? Number.NaN,
  };
}

/**
 * With LATENCY_TRACE: per 500 ms of 201s, the slowest webhook; then the five slowest webhooks
 * with what the server's trace recorded between their 201 and their arrival (event-loop stalls,
 * garbage collections, and any probe's stages for their event).
 */
function traceSlowest(rate: number): void {
  if (!trace) return;
  const events = readFileSync(trace, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { kind: string; at: number; ms?: number; [k: string]: unknown });
  const all = [...answeredAt]
    .filter(([id]) => arrivedAt.has(id))
    .map(([id, at]) => ({ id, at, delay: (arrivedAt.get(id) ?? at) - at }));
  const first = Math.min(...all.map((w) => w.at));
  const buckets = new Map<number, number>();
  for (const w of all) {
    const b = Math.floor((w.at - first) / 500);
    buckets.set(b, Math.max(buckets.get(b) ?? 0, w.delay));
  }
  console.log(`\ntrace at ${rate}/s: slowest webhook per 500 ms of 201s (s: ms)`);
  console.log(
    [...buckets]
      .sort(([a], [b]) => a - b)
      .map(([b, ms]) => `${(b / 2).toFixed(1)}: ${ms.toFixed(0)}`)
      .join(', '),
  );
  // Over the rate's window: the server's stalls and collections, by kind (count, total, longest).
  const last = Math.max(...all.map((w) => w.at + w.delay));
  const kinds = new Map<string, { n: number; ms: number; max: number }>();
  for (const e of events) {
    if (e.at < first || e.at > last || (e.kind !== 'stall' && e.kind !== 'gc')) continue;
    const kind = e.kind === 'gc' ? `gc ${String(e.gc)}` : 'stall >= 5 ms';
    const k = kinds.get(kind) ?? { n: 0, ms: 0, max: 0 };
    k.n += 1;
    k.ms += e.ms ?? 0;
    k.max = Math.max(k.max, e.ms ?? 0);
    kinds.set(kind, k);
  }
  console.log(
    [...kinds]
      .map(([kind, k]) => `${kind}: ${k.n}, ${k.ms.toFixed(0)} ms in all, longest ${k.max.toFixed(1)} ms`)
      .join('; '),
  );
  for (const w of all.sort((a, b) => b.delay - a.delay).slice(0, 5)) {
    const arrived = w.at + w.delay;
    const eventId = eventOf.get(w.id);
    const inside = events.filter(
      (e) =>
        (e.at >= w.at - 20 &&
          e.at <= arrived &&
          (e.kind === 'stall' || e.kind === 'gc' || !('event' in e))) ||
        (eventId !== undefined && e.event === eventId),
    );
    console.log(
      `  ${w.id} (${eventId}): 201 at +${(w.at - first).toFixed(1)} ms, webhook ${w.delay.toFixed(1)} ms later`,
    );
    for (const e of inside) {
      const { kind, at, ...rest } = e;
      console.log(`    ${(at - w.at).toFixed(1).padStart(8)} ms  ${kind} ${JSON.stringify(rest)}`);
    }
  }
}

const rows: Row[] = [];
try {
  const endpoint = await fetch(`${url}/v1/webhook-endpoints`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ url: `http://127.0.0.1:${receiverPort}/hook`, eventTypes: ['order.created'] }),
  });
  if (endpoint.status !== 201) throw new Error(`endpoint: ${endpoint.status} ${await endpoint.text()}`);
  // Warm up (JIT, pools, plan caches) at a modest rate; not reported.
  await offer(100, Math.min(3, seconds), { n: 0 });
  await sleep(1_000);
  for (const rate of rates) rows.push(await measure(rate));

  const ms = (n: number) => (Number.isNaN(n) ? '-' : n.toFixed(1));
  console.log(
    `\nbench/latency: the reference server as npm start runs it, PostgreSQL, ${seconds} s per rate, open loop`,
  );
  if (Object.keys(extraEnv).length > 0) console.log(`server env: ${JSON.stringify(extraEnv)}`);
  console.log(`machine load: ${readFileSync('/proc/loadavg', 'utf8').trim()}\n`);
  for (const [code, n] of statuses) console.log(`not 201 (${n}x): ${code}`);
  console.log('| offered/s | answered/s | orders | non-201 | lost | p50 ms | p95 ms | p99 ms | max ms |');
  console.log('|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of rows) {
    console.log(
      `| ${r.rate} | ${r.achieved.toFixed(0)} | ${r.orders} | ${r.failures} | ${r.lost} | ${ms(r.p50)} | ${ms(r.p95)} | ${ms(r.p99)} | ${ms(r.max)} |`,
    );
  }
  const at = (rate: number) => rows.find((r) => r.rate === rate);
  const part = (rate: number) => {
    const r = at(rate);
    return r ? `${rate}/s p50 ${ms(r.p50)} p99 ${ms(r.p99)}` : `${rate}/s not run`;
  };
  summary(import.meta.url, `latency: ${part(200)}, ${part(500)}`);
} finally {
  await pool.close();
  await server.stop();
  receiver.close();
  await admin.unsafe(`drop schema ${schema} cascade`);
  await admin.end();
}
