// bench/server: the reference server's whole stack against a bare Hono handler running the same
// statements on the same driver, in one run, on real PostgreSQL. Each server runs in its own
// Node process; autocannon drives them from this one. Rounds alternate bare and ours (and which
// goes first), so drift in the machine's load touches both; the spread of the rounds is printed
// beside each median. Target: our stack costs at most a fifth of the bare throughput.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//     npx tsx bench/server/run.ts [seconds per round] [rounds]
//
// BENCH_DRIVER (pg or postgres, default pg): the bare handler's driver, which must be the
// server's. PROFILE=1: CPU profiles of both servers to /tmp/server-prof, summarised at the end.
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { summary } from '../summary';
import { summarise } from './profile';

const base = process.env.DATABASE_URL;
if (!base) {
  console.error('bench/server needs DATABASE_URL (a real PostgreSQL).');
  process.exit(1);
}
const seconds = Number(process.argv[2] ?? 4);
const rounds = Number(process.argv[3] ?? 9);
const driver = process.env.BENCH_DRIVER ?? 'pg';
const schema = `bench_server_${randomBytes(4).toString('hex')}`;
const admin = postgres(base, { max: 1, onnotice: () => {} });
await admin.unsafe(`create schema ${schema}`);

const profileDir = process.env.PROFILE ? `/tmp/server-prof/${schema}` : undefined;

const KEY = `hf_test_${randomBytes(18).toString('base64url')}`;
const ACCOUNT = 'acct_bench';

interface Target {
  readonly name: string;
  readonly url: string;
  readonly child: ChildProcess;
}

function start(name: string, file: string): Promise<Target> {
  const child = fork(fileURLToPath(new URL(file, import.meta.url)), [], {
    execArgv: ['--import', 'tsx', '--conditions=@holdfast/source'],
    env: {
      ...process.env,
      BENCH_SCHEMA: schema,
      BENCH_KEY: KEY,
      BENCH_ACCOUNT: ACCOUNT,
      BENCH_DRIVER: driver,
    },
    // The request log goes where a deployment's would, never to a terminal (pretty-printed there).
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
    child.once('message', (message: { url: string }) => resolve({ name, url: message.url, child }));
  });
}

/** Sends `message` to the target and resolves with the first answer that has `key`. */
function ask<T>(target: Target, message: unknown, key: string): Promise<T> {
  return new Promise((resolve) => {
    const listen = (answer: unknown) => {
      if (typeof answer !== 'object' || answer === null || !(key in answer)) return;
      target.child.off('message', listen);
      resolve((answer as Record<string, T>)[key] as T);
    };
    target.child.on('message', listen);
    target.child.send(message as string);
  });
}

/** Profiles `work` in both servers (PROFILE=1): only the measured rounds, not start-up or warm-up. */
async function profiled<T>(label: string, work: () => Promise<T>): Promise<T> {
  if (!profileDir) return work();
  mkdirSync(profileDir, { recursive: true });
  await Promise.all([bare, ours].map((t) => ask(t, 'profile-start', 'profiling')));
  const result = await work();
  for (const t of [bare, ours]) {
    const file = `${profileDir}/${label}-${t.name}.cpuprofile`;
    await ask(t, { profileStop: file }, 'profiled');
    profiles.push(file);
  }
  return result;
}
const profiles: string[] = [];

/** CPU time (user + system, ms) the target's process has used so far. */
async function cpu(target: Target): Promise<number> {
  const usage = await ask<NodeJS.CpuUsage>(target, 'cpu', 'cpu');
  return (usage.user + usage.system) / 1000;
}

// Ours first: it applies the migrations the bare server's statements need.
const ours = await start('ours', './ours.ts');
const bare = await start('bare', './bare.ts');

// Seed through the API so both sides read the same rows.
for (let i = 0; i < 200; i += 1) {
  const response = await fetch(`${ours.url}/v1/orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ currency: 'EUR', total: 1000 + i, description: `seed ${i}` }),
  });
  if (response.status !== 201) throw new Error(`seeding failed: ${response.status} ${await response.text()}`);
}

interface Sample {
  readonly rps: number;
  readonly p99: number;
  readonly cpuPerRequest: number;
  readonly bad: number;
}

async function load(
  target: Target,
  method: 'GET' | 'POST',
  duration: number,
  path = '/v1/orders',
): Promise<Sample> {
  const request: autocannon.Request = { method, headers: { authorization: `Bearer ${KEY}` } };
  if (method === 'POST') {
    request.headers = { ...request.headers, 'content-type': 'application/json' };
    request.body = JSON.stringify({ currency: 'EUR', total: 4200, description: 'bench' });
    // A fresh Idempotency-Key on every request: each one claims, writes and stores its answer.
    request.setupRequest = (req) => ({
      ...req,
      headers: { ...req.headers, 'idempotency-key': randomUUID() },
    });
  }
  const before = await cpu(target);
  const result = await autocannon({
    url: `${target.url}${path}`,
    connections: 10,
    duration,
    requests: [request],
  });
  const used = (await cpu(target)) - before;
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    cpuPerRequest: used / Math.max(1, result.requests.total),
    bad: result.non2xx + result.errors + result.timeouts,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};
/** The middle half of `values` (lower and upper quartile), as `lo-hi`. */
const spread = (values: number[], digits = 0) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * (sorted.length - 1) + 0.5))] ?? 0;
  return `${at(0.25).toFixed(digits)}-${at(0.75).toFixed(digits)}`;
};

const rows: string[] = [];
const costs: Partial<Record<'GET' | 'POST', number>> = {};
/** Each cost's spread: the middle half of the per-round costs (each round pairs one bare and one ours). */
const costSpreads: Partial<Record<'GET' | 'POST', string>> = {};
let oursPost = 0;
let oursPostRounds: number[] = [];
// BENCH_METHODS=GET (or POST) runs one of the two, e.g. to profile it (PROFILE=1 writes CPU
// profiles of both servers to /tmp/server-prof).
const methods = (process.env.BENCH_METHODS ?? 'GET,POST').split(',');
for (const [label, method] of (
  [
    ['GET /v1/orders', 'GET'],
    ['POST /v1/orders (fresh Idempotency-Key)', 'POST'],
  ] as const
).filter(([, method]) => methods.includes(method))) {
  // Warm both (JIT, connection pools, PostgreSQL plan caches); not counted.
  await load(bare, method, 2);
  await load(ours, method, 2);
  const samples: Record<'bare' | 'ours', Sample[]> = { bare: [], ours: [] };
  // Alternate which goes first, so drift within a round reaches both alike.
  await profiled(method, async () => {
    for (let round = 0; round < rounds; round += 1) {
      if (round % 2 === 0) {
        samples.bare.push(await load(bare, method, seconds));
        samples.ours.push(await load(ours, method, seconds));
      } else {
        samples.ours.push(await load(ours, method, seconds));
        samples.bare.push(await load(bare, method, seconds));
      }
    }
  });
  const summary = (list: Sample[]) => ({
    rps: median(list.map((s) => s.rps)),
    p99: median(list.map((s) => s.p99)),
    cpu: median(list.map((s) => s.cpuPerRequest)),
    bad: list.reduce((sum, s) => sum + s.bad, 0),
  });
  const b = summary(samples.bare);
  const o = summary(samples.ours);
  // The cost of each round (ours against the bare run beside it), and the median of those: a
  // round both servers ran in the same few seconds cancels the machine's drift between rounds.
  const perRound = samples.ours.map((s, i) => 1 - s.rps / (samples.bare[i]?.rps ?? s.rps));
  const cost = median(perRound);
  costs[method] = cost;
  costSpreads[method] = spread(
    perRound.map((c) => c * 100),
    1,
  );
  if (method === 'POST') {
    oursPost = o.rps;
    oursPostRounds = samples.ours.map((s) => s.rps);
  }
  const rps = (list: Sample[]) => `${spread(list.map((s) => s.rps))}`;
  const cpus = (list: Sample[]) =>
    `${spread(
      list.map((s) => s.cpuPerRequest),
      3,
    )}`;
  rows.push(
    `| ${label} | ${b.rps.toFixed(0)} (${rps(samples.bare)}) | ${b.p99} | ${b.cpu.toFixed(3)} (${cpus(samples.bare)}) | ${o.rps.toFixed(0)} (${rps(samples.ours)}) | ${o.p99} | ${o.cpu.toFixed(3)} (${cpus(samples.ours)}) | **${(cost * 100).toFixed(1)}%** (${costSpreads[method]}) | ${b.bad + o.bad} |`,
  );
}

// For reference, not part of the target: the bare insert alone (no idempotency claim, outbox or
// stored answer), which shows what those guarantees cost in PostgreSQL rather than in our code.
// Its rounds alternate with more rounds of ours, so the ratio too pairs rounds run together.
await load(bare, 'POST', 2, '/insert-only/v1/orders');
const insertOnly: Sample[] = [];
const methodsRun = methods.includes('POST');
for (let round = 0; round < rounds; round += 1) {
  insertOnly.push(await load(bare, 'POST', seconds, '/insert-only/v1/orders'));
  if (methodsRun) oursPostRounds.push((await load(ours, 'POST', seconds)).rps);
}
const insertRatios = methodsRun
  ? insertOnly.map((s, i) => (oursPostRounds[rounds + i] ?? oursPost) / s.rps)
  : [];
const [version] = await admin`show server_version`;
console.log(
  `\nPostgreSQL ${version?.server_version}, Node ${process.version}, driver ${driver}, ${rounds} rounds of ${seconds} s each: medians (middle half of the rounds), 10 connections, each server in its own process\n`,
);
console.log(
  '| request | bare req/s | bare p99 ms | bare CPU ms/req | Holdfast req/s | Holdfast p99 ms | Holdfast CPU ms/req | cost of our stack | non-2xx/errors |',
);
console.log('|---|--:|--:|--:|--:|--:|--:|--:|--:|');
for (const row of rows) console.log(row);
console.log(
  `| for reference: bare POST with the order INSERT alone | ${median(insertOnly.map((s) => s.rps)).toFixed(0)} (${spread(insertOnly.map((s) => s.rps))}) | ${median(insertOnly.map((s) => s.p99))} | ${median(insertOnly.map((s) => s.cpuPerRequest)).toFixed(3)} | | | | | ${insertOnly.reduce((sum, s) => sum + s.bad, 0)} |`,
);
console.log(
  '\nCost = 1 - Holdfast req/s / bare req/s, per pair of rounds run one after the other, median (middle half). Target: at most 20% for our stack (auth, rate limit, validation, signed cursors, row mapping, problem+json, idempotency logic).',
);

const pct = (cost: number | undefined) => (cost === undefined ? 'not run' : `${(cost * 100).toFixed(2)}%`);
summary(
  import.meta.url,
  `server: GET cost ${pct(costs.GET)} (${costSpreads.GET ?? '-'}), POST cost ${pct(costs.POST)} (${costSpreads.POST ?? '-'}), POST vs bare insert ${median(insertRatios).toFixed(2)}x (${spread(insertRatios, 2)}), ${rounds} rounds, driver ${driver}`,
);

for (const target of [ours, bare]) {
  target.child.removeAllListeners('exit');
  const exited = new Promise((resolve) => target.child.once('exit', resolve));
  target.child.send('stop');
  await exited;
}
await admin.unsafe(`drop schema ${schema} cascade`);
await admin.end();

for (const file of profiles) console.log(`\n${summarise(file)}`);
