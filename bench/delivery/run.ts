// bench/delivery (issue 16): deliveries per second with 1 and 2 worker processes against the
// bare limit, measured the same way (to one endpoint, then spread over 99); fairness (1 slow +
// 99 fast endpoints; a 100,000-delivery backlog beside a new delivery); the lease statement's
// EXPLAIN at 1,000 and 100,000 due deliveries; what enqueueEvent adds to a business
// transaction. Usage:
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//     npx tsx --conditions=@holdfast/source bench/delivery/run.ts
// Workers run as child processes with the reference server's defaults, read from its config
// (concurrency 128, perEndpointConcurrency 200, pollMs 100); the receiver (204 at once) and the
// loader run here.
// Runs in a fresh schema, dropped at the end (BENCH_PARTITIONS=1: with a month of daily history
// partitions). Ends with
//   delivery: 1 process <n>/s, 2 processes <m>/s, bare limit <b>/s
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { fromPostgres } from '@holdfast/db/postgres';
import { createEndpoint, enqueueEvent, migrations, updateEndpoint } from '@holdfast/webhook-delivery';
import postgres from 'postgres';
import { loadConfig } from '../../examples/reference-server/src/config';
import { leaseStatement } from '../../packages/webhook-delivery/src/lease';
import { workerStatements } from '../../packages/webhook-delivery/src/sql/worker';
import { summary } from '../summary';

const EVENTS = Number(process.env.EVENTS ?? 20_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const WARMUP = Number(process.env.WARMUP ?? 5_000);
const TXS = Number(process.env.TXS ?? 300);
// What `npm start` runs with: nothing here is tuned for the bench.
const defaults = loadConfig({}).delivery;
const CONCURRENCY = Number(process.env.CONCURRENCY ?? defaults.concurrency);
const PER_ENDPOINT = Number(process.env.PER_ENDPOINT ?? defaults.perEndpoint);
const POLL_MS = Number(process.env.POLL_MS ?? defaults.pollMs);
const SCALE_REPEAT = Number(process.env.SCALE_REPEAT ?? 5);
const SLOW_MS = 5_000;
/** Endpoints the spread case shares the throughput's deliveries among. */
const SPREAD = 99;
const base = process.env.DATABASE_URL;
if (!base) {
  console.error('bench/delivery needs DATABASE_URL (a real PostgreSQL)');
  process.exit(1);
}
const benchSchema = `bench_delivery_${randomBytes(4).toString('hex')}`;
const admin = postgres(base, { max: 1, onnotice: () => {} });
await admin.unsafe(`create schema ${benchSchema}`);
const url = new URL(base);
url.searchParams.set('options', `-c search_path=${benchSchema}`);
// Names this run's connections in pg_stat_activity (the lock-wait sampler below).
url.searchParams.set('application_name', benchSchema);
const sql = postgres(url.toString(), { max: 10, onnotice: () => {} });
// MIGRATIONS_UPTO (e.g. 010): the package's migrations up to that number only, the schema of an
// earlier release (the scale model's baseline, `SCALE_BASELINE`).
const upTo = Number(process.env.MIGRATIONS_UPTO ?? Number.POSITIVE_INFINITY);
const migrationNumber = (id: string) => Number(/\/(\d{3})_/.exec(id)?.[1] ?? 0);
for (const migration of migrations().filter((m) => migrationNumber(m.id) <= upTo))
  await sql.unsafe(migration.sql);
// BENCH_PARTITIONS=1: the daily history partitions of a deployment a month old (30 days behind,
// today, 7 ahead, as the maintenance keeps them) instead of the default partition alone, for
// statements whose cost follows the number of partitions.
if (process.env.BENCH_PARTITIONS === '1')
  for (const table of ['holdfast_events', 'holdfast_deliveries', 'holdfast_delivery_attempts'])
    await sql`select holdfast_history_ensure(${table}, now() - interval '30 days', now() + interval '7 days', 1)`;
await sql`create table bench_orders (id text primary key, body jsonb not null, created_at timestamptz not null)`;

// The receiver: /fast/<key> answers 204 at once, /slow/<key> after 5 s. Counts per key, and
// the arrival time of each Webhook-Id sent to an endpoint key in `timed` (the backlog case's new
// deliveries; keeping every arrival held hundreds of thousands of entries for nothing).
const counts = new Map<string, number>();
const arrivals = new Map<string, number>();
const timed = new Set<string>();
const server = createServer((req, res) => {
  const [, kind, key] = (req.url ?? '').split('/');
  // The ordered case's receiver refuses the event of one resource (`stuck`), read from the body.
  const chunks: Buffer[] = [];
  if (kind === 'ordered') req.on('data', (chunk: Buffer) => chunks.push(chunk));
  else req.resume();
  req.on('end', () => {
    if (kind === 'ordered' && Buffer.concat(chunks).includes('"id":"stuck"')) {
      res.statusCode = 500;
      res.end();
      return;
    }
    counts.set(key ?? '', (counts.get(key ?? '') ?? 0) + 1);
    const id = req.headers['webhook-id'];
    if (typeof id === 'string' && timed.has(key ?? '')) arrivals.set(id, performance.now());
    const answer = () => {
      res.statusCode = 204;
      res.end();
    };
    if (kind === 'slow') setTimeout(answer, SLOW_MS);
    else answer();
  });
});
server.keepAliveTimeout = 60_000;
const port: number = await new Promise<number>((resolve) =>
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    resolve(typeof address === 'object' && address ? address.port : 0);
  }),
);
const target = (kind: 'fast' | 'slow' | 'ordered', key: string) => `http://127.0.0.1:${port}/${kind}/${key}`;
const count = (key: string) => counts.get(key) ?? 0;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const children = new Set<ChildProcess>();

function child(file: string, env: Record<string, string> = {}): Promise<ChildProcess> {
  const proc = spawn(
    process.execPath,
    [
      '--conditions=@holdfast/source',
      '--import',
      'tsx',
      ...(process.env.PROFILE ? ['--cpu-prof', '--cpu-prof-dir=/tmp/bench-prof'] : []),
      fileURLToPath(new URL(file, import.meta.url)),
    ],
    {
      env: {
        ...process.env,
        DATABASE_URL: url.toString(),
        CONCURRENCY: String(CONCURRENCY),
        PER_ENDPOINT: String(PER_ENDPOINT),
        POLL_MS: String(POLL_MS),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  return new Promise((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`${file} exited with ${code}`)));
    proc.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(proc);
    });
  });
}

function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  proc.removeAllListeners('exit');
  return new Promise((resolve) => {
    proc.once('exit', () => resolve());
    proc.kill('SIGTERM');
  });
}

async function endpoint(
  account: string,
  kind: 'fast' | 'slow' | 'ordered',
  key: string,
  eventTypes?: string[],
  ordering: 'none' | 'per-resource' = 'none',
): Promise<string> {
  const { endpoint: created } = await createEndpoint(
    fromPostgres(sql),
    { account, url: target(kind, key), ordering, ...(eventTypes ? { eventTypes } : {}) },
    { allowPrivateDestinations: true, concurrencyMax: PER_ENDPOINT },
  );
  return created.id;
}

/** `perEndpoint` due deliveries to each endpoint (events and deliveries in two statements). */
async function backlog(account: string, endpointIds: readonly string[], perEndpoint: number): Promise<void> {
  const tag = randomBytes(4).toString('hex');
  await sql.begin(async (tx) => {
    await tx`
      insert into holdfast_events (id, account_id, type, resource_id, sequence, payload, created_at)
      select 'evt_' || ${tag} || '_' || i, ${account}, 'order.created', 'ord_' || ${tag} || '_' || i, 1,
             json_build_object('id', 'evt_' || ${tag} || '_' || i, 'type', 'order.created',
               'createdAt', now(), 'sequence', 1,
               'data', json_build_object('object', json_build_object('id', 'ord_' || i, 'currency', 'EUR',
                 'total', 4200, 'status', 'pending', 'description', 'bench')))::text,
             now()
      from generate_series(1, ${perEndpoint}) as i`;
    await tx`
      insert into holdfast_deliveries
        (id, account_id, event_id, endpoint_id, event_type, status, next_attempt_at, created_at, updated_at)
      select 'dlv_' || ${tag} || '_' || i || '_' || e.n, ${account}, 'evt_' || ${tag} || '_' || i, e.id,
             'order.created', 'pending', now(), now(), now()
      from generate_series(1, ${perEndpoint}) as i,
           unnest(${tx.array([...endpointIds])}::text[]) with ordinality as e (id, n)`;
  });
}

/**
 * `total` due deliveries to one endpoint, about `resources` resources (each resource's events in
 * sequence order), placed in their resources' lines as the outbox places them when `ordered`.
 * With `stuck`, a quarter of them are about the resource `stuck`, whose first event the
 * receiver refuses (its retry is a minute away: its line waits behind it for the whole run).
 */
async function resourceBacklog(
  account: string,
  endpointId: string,
  {
    total,
    resources,
    ordered,
    stuck,
  }: { total: number; resources: number; ordered: boolean; stuck: boolean },
): Promise<void> {
  const tag = randomBytes(4).toString('hex');
  const stuckEvents = stuck ? Math.round(total / 4) : 0;
  const perResource = Math.ceil((total - stuckEvents) / resources);
  await sql.begin(async (tx) => {
    await tx`
      insert into holdfast_events (id, account_id, type, resource_id, sequence, payload, created_at)
      select 'evt_' || ${tag} || '_' || r.id || '_' || s, ${account}, 'order.updated', r.id, s,
             json_build_object('id', 'evt_' || ${tag} || '_' || r.id || '_' || s, 'type', 'order.updated',
               'createdAt', now(), 'sequence', s,
               'data', json_build_object('object', json_build_object('id', r.id, 'currency', 'EUR',
                 'total', 4200, 'status', 'pending', 'description', 'bench')))::text,
             now()
      from (
        select 'ord_' || ${tag} || '_' || i as id, ${perResource}::int as n from generate_series(1, ${resources}) as i
        union all select 'stuck', ${stuckEvents}::int where ${stuckEvents}::int > 0
      ) r, generate_series(1, r.n) as s`;
    await tx`
      insert into holdfast_deliveries
        (id, account_id, event_id, endpoint_id, event_type, status, next_attempt_at, created_at, updated_at,
         ordering_key, ordering_pos)
      select 'dlv_' || ev.id, ${account}, ev.id, ${endpointId}, 'order.updated', 'pending',
             -- As the outbox writes them: behind the first of its line, a delivery waits undue.
             case when ${ordered} and ev.sequence > 1 then null else now() end, now(), now(),
             case when ${ordered} then ev.resource_id end,
             case when ${ordered} then nextval('holdfast_delivery_order') end
      from (
        select id, resource_id, sequence from holdfast_events where id like ${`evt_${tag}_%`}
        order by sequence, resource_id
      ) ev`;
  });
}

type OrderedKind = 'unordered' | 'ordered' | 'besideUnordered' | 'besideOrdered';

/**
 * The ordered case, 1 worker process, EVENTS deliveries about ORDERED_RESOURCES resources:
 * `unordered`, their deliveries per second to an endpoint with `ordering: "none"`; `ordered`,
 * to one with `"per-resource"` (one in flight per resource, each waiting for the one before);
 * `besideOrdered`, the unordered endpoint's rate while a per-resource endpoint beside it drains
 * the same backlog with a stuck resource holding a quarter of it, against `besideUnordered`,
 * the same beside an unordered endpoint with that backlog (the worker's capacity is shared alike).
 */
async function orderedCase(kind: OrderedKind): Promise<number> {
  run += 1;
  const account = `acct_ord_${run}`;
  const key = `o${run}`;
  const resources = Number(process.env.ORDERED_RESOURCES ?? 200);
  const measured = await endpoint(
    account,
    kind === 'ordered' ? 'ordered' : 'fast',
    key,
    undefined,
    kind === 'ordered' ? 'per-resource' : 'none',
  );
  const proc = await child('./worker.ts');
  await sleep(500);
  if (kind === 'besideOrdered' || kind === 'besideUnordered') {
    const ordered = kind === 'besideOrdered';
    const other = await endpoint(account, 'ordered', `${key}b`, undefined, ordered ? 'per-resource' : 'none');
    await resourceBacklog(account, other, { total: EVENTS, resources, ordered, stuck: true });
  }
  await resourceBacklog(account, measured, {
    total: EVENTS,
    resources,
    ordered: kind === 'ordered',
    stuck: false,
  });
  const due = Number(
    (await sql`select count(*)::int as n from holdfast_deliveries where endpoint_id = ${measured}`)[0]?.n,
  );
  const start = performance.now();
  await until(() => count(key) >= due);
  const seconds = (performance.now() - start) / 1000;
  await stop(proc);
  await emptyTables();
  return due / seconds;
}

async function until(condition: () => boolean, timeoutMs = 300_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error('bench timed out');
    await sleep(5);
  }
}

type Mode = 'bare' | 1 | 2;

/** Per mode, the share of this run's active statements found waiting for a lock, per run. */
const lockWaits = new Map<string, number[]>();

/**
 * Samples pg_stat_activity every 10 ms until `done`: of this run's statements that are active,
 * how many wait for a lock (`wait_event_type = 'Lock'`: a row another transaction holds). The
 * share is the contention between workers, whatever the machine's load.
 */
async function sampleLockWaits(done: () => boolean): Promise<number> {
  let active = 0;
  let waiting = 0;
  while (!done()) {
    const [row] = await admin<{ active: number; waiting: number }[]>`
      select count(*)::int as active, (count(*) filter (where wait_event_type = 'Lock'))::int as waiting
      from pg_stat_activity where application_name = ${benchSchema} and state = 'active'`;
    active += row?.active ?? 0;
    waiting += row?.waiting ?? 0;
    await sleep(10);
  }
  return active === 0 ? 0 : waiting / active;
}
/** The machine's CPU time so far, busy and idle (jiffies, /proc/stat). */
function cpuTimes(): { busy: number; idle: number } {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: fields.reduce((a, b) => a + b, 0) - idle, idle };
}
/** Transactions committed in the database so far, all sessions (pg_stat_database). */
async function commits(): Promise<number> {
  const [row] = await admin<{ n: string }[]>`
    select xact_commit::text as n from pg_stat_database where datname = current_database()`;
  return Number(row?.n ?? 0);
}
/** Per mode and run: the machine's idle share and the commits per delivery (statements, roughly). */
const costs = new Map<string, { idle: number; commits: number }[]>();

let run = 0;
/**
 * Deliveries per second: children started idle, then EVENTS due deliveries appear at once, to
 * one endpoint or spread evenly over `spread` endpoints of the account.
 */
async function throughput(mode: Mode, spread = 1): Promise<number> {
  run += 1;
  const label = spreadLabel(mode, spread);
  const account = `acct_tp_${run}`;
  const key = `tp${run}`;
  const keys = spread === 1 ? [key] : Array.from({ length: spread }, (_, i) => `${key}_${i}`);
  const ids: string[] = [];
  for (const k of keys) ids.push(await endpoint(account, 'fast', k));
  const due = Math.round(EVENTS / spread) * spread;
  const delivered = () => keys.reduce((sum, k) => sum + count(k), 0);
  const procs =
    mode === 'bare'
      ? [await child('./bare.ts', { ACCOUNT: account })]
      : await Promise.all(Array.from({ length: mode }, () => child('./worker.ts')));
  await sleep(500);
  // Warm-up: each process delivers WARMUP first (its JIT, connections and caches warmed, as in a
  // worker that has been running), to another endpoint of the account; then the measured burst.
  const warmKey = `${key}w`;
  const warm = await endpoint(account, 'fast', warmKey);
  await backlog(account, [warm], WARMUP * procs.length);
  await until(() => count(warmKey) >= WARMUP * procs.length);
  await backlog(account, ids, due / spread);
  const start = performance.now();
  const cpu = cpuTimes();
  const committed = await commits();
  const sampling = sampleLockWaits(() => delivered() >= due);
  await until(() => delivered() >= due);
  const seconds = (performance.now() - start) / 1000;
  const waits = await sampling;
  // Read before the last outcomes commit: close enough over 20,000 deliveries.
  const perDelivery = ((await commits()) - committed) / due;
  const after = cpuTimes();
  const idle = (after.idle - cpu.idle) / (after.idle - cpu.idle + after.busy - cpu.busy);
  lockWaits.set(label, [...(lockWaits.get(label) ?? []), waits]);
  costs.set(label, [...(costs.get(label) ?? []), { idle, commits: perDelivery }]);
  await Promise.all(procs.map(stop));
  await emptyTables();
  return due / seconds;
}

/**
 * The next run starts from the same tables as this one did: empty (so its endpoints need not be
 * disabled: nothing of theirs is left to send). Each run leaves thousands of
 * deliveries, events and attempts behind, and every later run paid for them (bigger indexes to
 * insert into, dead rows where autovacuum is off, as on the CI machine): over twelve throughput
 * modes in a row the rate fell by a sixth, and over six fairness runs by a third, so whichever
 * kind of run had the earlier slots looked better. Vacuuming between runs did not stop the slide.
 */
async function emptyTables(): Promise<void> {
  await sql`truncate holdfast_delivery_attempts, holdfast_deliveries, holdfast_events`;
  await sql`vacuum holdfast_endpoint_pacing, holdfast_endpoint_releases`;
}

/** How a mode is named in the progress lines and the maps: `1`, `2`, `bare`, or `2 over 99`. */
function spreadLabel(mode: Mode, spread: number): string {
  return spread === 1 ? String(mode) : `${mode} over ${spread}`;
}

/**
 * `rounds` rounds of `modes`, the order reversed every other round so drift in the machine's
 * load reaches every mode; each rate is reported as it comes. The rates, by mode.
 */
async function measureRounds(
  modes: readonly Mode[],
  spread: number,
  rounds: number,
  report: (mode: Mode, rate: number) => void,
): Promise<Record<string, number[]>> {
  const samples: Record<string, number[]> = {};
  for (let round = 0; round < rounds; round += 1) {
    for (const mode of round % 2 ? [...modes].reverse() : modes) {
      const rate = await throughput(mode, spread);
      samples[String(mode)] = [...(samples[String(mode)] ?? []), rate];
      report(mode, rate);
    }
  }
  return samples;
}

/** The 99 fast endpoints' deliveries per second, alone or beside one endpoint slower than 5 s. */
async function fairness(withSlow: boolean): Promise<number> {
  run += 1;
  const account = `acct_fair_${run}`;
  const fast: string[] = [];
  for (let i = 0; i < 99; i += 1) fast.push(await endpoint(account, 'fast', `f${run}_${i}`));
  const slow = withSlow ? await endpoint(account, 'slow', `s${run}`) : undefined;
  const proc = await child('./worker.ts');
  await sleep(500);
  const perEndpoint = Math.round(EVENTS / 2 / 99);
  if (slow) await backlog(account, [slow], 1000);
  await backlog(account, fast, perEndpoint);
  const start = performance.now();
  const keys = Array.from({ length: 99 }, (_, i) => `f${run}_${i}`);
  await until(() => keys.every((key) => count(key) >= perEndpoint));
  const seconds = (performance.now() - start) / 1000;
  await stop(proc);
  await emptyTables();
  return (perEndpoint * 99) / seconds;
}

/** `rounds` fairness pairs, the order flipped every other round (as the throughput rounds). */
async function fairnessPairs(rounds: number, report?: (alone: number, beside: number) => void) {
  const alone: number[] = [];
  const beside: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    for (const withSlow of round % 2 === 0 ? [false, true] : [true, false]) {
      (withSlow ? beside : alone).push(await fairness(withSlow));
    }
    report?.(alone.at(-1) ?? 0, beside.at(-1) ?? 0);
  }
  return { alone, beside };
}

/**
 * Delay from commit to arrival of new deliveries to one endpoint while another drains 100,000,
 * and the same measurement with nothing else due (the worker idle, polling): the backlog's cost
 * is the difference.
 */
async function backlogDelay(withBacklog: boolean): Promise<{ delays: number[]; drainedMeanwhile: number }> {
  run += 1;
  const account = `acct_backlog_${run}`;
  const bigKey = `big${run}`;
  const smallKey = `small${run}`;
  const big = await endpoint(account, 'fast', bigKey, ['order.created']);
  await endpoint(account, 'fast', smallKey, ['order.small']);
  timed.add(smallKey);
  if (withBacklog) await backlog(account, [big], 100_000);
  const proc = await child('./worker.ts');
  if (withBacklog) await until(() => count(bigKey) >= 2_000);
  else await sleep(500);
  const before = count(bigKey);
  const delays: number[] = [];
  for (let i = 0; i < 20; i += 1) {
    const event = await sql.begin((tx) =>
      enqueueEvent(fromPostgres(tx), {
        account,
        type: 'order.small',
        resourceId: `small_${i}`,
        object: { id: i },
      }),
    );
    const committed = performance.now();
    await until(() => arrivals.has(event.id), 30_000);
    delays.push((arrivals.get(event.id) ?? committed) - committed);
    await sleep(50 + Math.random() * POLL_MS);
  }
  const drainedMeanwhile = count(bigKey) - before;
  await updateEndpoint(fromPostgres(sql), { account, id: big, status: 'disabled' });
  await stop(proc);
  return { delays, drainedMeanwhile };
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/**
 * The rate a mode is judged by: the median of its rounds after the first (the first round of a
 * mode runs faster or slower for reasons of its own: an empty table's first fill, the machine's
 * other load settling), with the spread of the rounds kept. The best round is not a measure: on
 * a shared machine it is the luckiest, and comparing two modes' luckiest rounds compares luck.
 */
function judged(xs: readonly number[]): { rate: number; low: number; high: number; kept: number } {
  const kept = xs.length > 1 ? xs.slice(1) : xs;
  return { rate: median(kept), low: Math.min(...kept), high: Math.max(...kept), kept: kept.length };
}
const spreadText = (j: ReturnType<typeof judged>) =>
  `${j.rate.toFixed(0)}/s (${j.low.toFixed(0)} to ${j.high.toFixed(0)} over ${j.kept} rounds)`;
const maximum = (xs: readonly number[]) => Math.max(0, ...xs);

interface PlanSummary {
  due: number;
  endpoints: number;
  ms: number;
  buffers: number;
  leased: number;
  text: string;
  /** Whether `text` is the plan of the statement inside the lease function (auto_explain). */
  nested: boolean;
}

/** Runs `work` in a transaction of `client` that is rolled back (EXPLAIN ANALYZE really leases). */
async function rolledBack<T>(
  client: postgres.Sql,
  work: (tx: postgres.TransactionSql) => Promise<T>,
): Promise<T> {
  let result: { value: T } | undefined;
  await client
    .begin(async (tx) => {
      result = { value: await work(tx) };
      throw new Error('rollback');
    })
    .catch((error: unknown) => {
      if (!(error instanceof Error && error.message === 'rollback')) throw error;
    });
  if (!result) throw new Error('no result');
  return result.value;
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of one lease round (limit 128), rolled back. The round is the function
 * `holdfast_lease_deliveries`, so the plan of the statement inside it is taken with auto_explain
 * (nested statements, sent back as notices); where auto_explain cannot be loaded (not a
 * superuser), only the function's own totals are shown.
 */
async function explainLease(due: number, endpoints: number): Promise<PlanSummary> {
  const request = {
    owner: 'explain',
    limit: CONCURRENCY,
    perEndpoint: PER_ENDPOINT,
    at: new Date(),
    leaseMs: 40_000,
    paused: [],
    endpointShare: Math.ceil(CONCURRENCY / 2),
    running: new Map<string, number>(),
  };
  const notices: string[] = [];
  const explainer = postgres(url.toString(), {
    max: 1,
    onnotice: (notice) => notices.push(String(notice.message)),
  });
  const run = async (format: 'json' | 'text', nestedPlan = true) => {
    notices.length = 0;
    const { rows, nested } = await rolledBack(explainer, async (tx) => {
      // In a savepoint: where the load fails (not a superuser), the transaction carries on.
      const loaded =
        nestedPlan &&
        (await tx
          .savepoint((sp) => sp.unsafe(`load 'auto_explain'`))
          .then(() => true)
          .catch(() => false));
      if (loaded) {
        await tx.unsafe(
          `select set_config('auto_explain.log_min_duration', '0', true), set_config('auto_explain.log_analyze', 'on', true),
                  set_config('auto_explain.log_buffers', 'on', true), set_config('auto_explain.log_timing', '${format === 'json' ? 'on' : 'off'}', true),
                  set_config('auto_explain.log_nested_statements', 'on', true), set_config('auto_explain.log_level', 'notice', true),
                  set_config('auto_explain.log_format', '${format}', true)`,
        );
      }
      const lease = leaseStatement({ db: fromPostgres(tx), sql: workerStatements() }, request);
      const explained = await tx.unsafe(
        `explain (analyze, buffers, ${format === 'json' ? 'format json' : 'costs off, timing off'}) ${lease.text}`,
        lease.values as postgres.ParameterOrJSON<never>[],
      );
      return { rows: explained as readonly postgres.Row[], nested: loaded };
    });
    // The nested statement's plan: the notice that is not about the EXPLAIN itself.
    // The lease statement's own plan, not those of the statements its triggers run.
    const inner = nested
      ? notices.find((notice) => !/explain \(/i.test(notice) && /with settled/i.test(notice))
      : undefined;
    return { rows, inner };
  };
  const text = await run('text');
  // The time and buffers without auto_explain, which would explain every statement the round's
  // triggers run too, and send each plan back as a notice: the median of SCALE_REPEAT runs (5),
  // each rolled back (one run on a shared machine is as likely as not a slow one).
  const plains: Awaited<ReturnType<typeof run>>[] = [];
  for (let i = 0; i < SCALE_REPEAT; i += 1) plains.push(await run('json', false));
  const executionMs = (r: Awaited<ReturnType<typeof run>>) =>
    ((r.rows[0]?.['QUERY PLAN'] ?? []) as { 'Execution Time': number }[])[0]?.['Execution Time'] ?? 0;
  const plain = [...plains].sort((a, b) => executionMs(a) - executionMs(b))[Math.floor(plains.length / 2)];
  if (!plain) throw new Error('SCALE_REPEAT must be at least 1');
  await explainer.end();
  // PostgreSQL's JSON plan format: https://www.postgresql.org/docs/current/sql-explain.html
  const [outer] = (plain.rows[0]?.['QUERY PLAN'] ?? []) as {
    Plan: Record<string, number>;
    'Execution Time': number;
  }[];
  // auto_explain's text starts with the statement itself; the plan starts at its first node.
  const lines = text.inner?.split('\n') ?? text.rows.map((row) => String(row['QUERY PLAN']));
  const planText = lines
    .slice(
      Math.max(
        0,
        lines.findIndex((line) => /\(actual /.test(line)),
      ),
    )
    .join('\n');
  return {
    due,
    endpoints,
    ms: outer?.['Execution Time'] ?? 0,
    buffers: (outer?.Plan['Shared Hit Blocks'] ?? 0) + (outer?.Plan['Shared Read Blocks'] ?? 0),
    leased: outer?.Plan['Actual Rows'] ?? 0,
    text: planText,
    nested: text.inner !== undefined,
  };
}

/**
 * Vacuums what a round reads, as autovacuum would between bursts: the deliveries and, where
 * migration 009 made them, the queue tables (whose turn index otherwise keeps the dead entries of
 * every turn moved, which a round steps over until they are removed).
 */
async function vacuumQueue(): Promise<void> {
  const tables = await sql<{ name: string }[]>`
    select t as name from unnest(array['holdfast_deliveries', 'holdfast_delivery_queue', 'holdfast_endpoint_queue']) t
    where to_regclass(t) is not null`;
  for (const { name } of tables) await sql.unsafe(`vacuum ${name}`);
}

/** 1,000 endpoints with 1 then 100 due deliveries each, and one endpoint with 1,000 then 100,000. */
async function scaleModel(): Promise<PlanSummary[]> {
  const plans: PlanSummary[] = [];
  const account = 'acct_scale';
  const many: string[] = [];
  for (let i = 0; i < 1000; i += 1) many.push(await endpoint(account, 'fast', `m${i}`));
  await backlog(account, many, 1);
  await vacuumQueue();
  plans.push(await explainLease(1_000, 1_000));
  await backlog(account, many, 99);
  await vacuumQueue();
  plans.push(await explainLease(100_000, 1_000));
  for (const id of many) await updateEndpoint(fromPostgres(sql), { account, id, status: 'disabled' });
  const one = await endpoint('acct_scale_one', 'fast', 'one');
  await backlog('acct_scale_one', [one], 1_000);
  await vacuumQueue();
  plans.push(await explainLease(1_000, 1));
  await backlog('acct_scale_one', [one], 99_000);
  await vacuumQueue();
  plans.push(await explainLease(100_000, 1));
  await updateEndpoint(fromPostgres(sql), { account: 'acct_scale_one', id: one, status: 'disabled' });
  return plans;
}

/** The scale model run by a child of this script on the schema of migrations up to `upTo`. */
async function scaleBaseline(upTo: string): Promise<Omit<PlanSummary, 'text'>[]> {
  const proc = spawn(
    process.execPath,
    ['--conditions=@holdfast/source', '--import', 'tsx', fileURLToPath(import.meta.url)],
    {
      env: {
        ...process.env,
        BENCH_ONLY: 'scale',
        SCALE_JSON: '1',
        SCALE_BASELINE: '',
        BENCH_PLAN: '',
        MIGRATIONS_UPTO: upTo,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  await new Promise((resolve) => proc.on('exit', resolve));
  const line = out.split('\n').find((l) => l.startsWith('SCALE_JSON '));
  if (!line) throw new Error(`the baseline scale model printed nothing:\n${out}`);
  return JSON.parse(line.slice('SCALE_JSON '.length));
}

/** The scale table, the baseline's columns beside this schema's, and its summary line. */
function printScale(
  before: readonly Omit<PlanSummary, 'text'>[],
  after: readonly PlanSummary[],
  upTo: string,
): void {
  const n = (x: number) => x.toLocaleString('en-US');
  console.log(
    `\nOne lease round of at most ${CONCURRENCY}, rolled back, median of ${SCALE_REPEAT} runs: migrations up to ${upTo} (before) and all (after)\n`,
  );
  console.log(
    '| endpoints with due work | due deliveries | leased | before ms | before buffers | after ms | after buffers | after buffers per leased |',
  );
  console.log('|--:|--:|--:|--:|--:|--:|--:|--:|');
  after.forEach((a, i) => {
    const b = before[i];
    console.log(
      `| ${n(a.endpoints)} | ${n(a.due)} | ${a.leased} | ${b?.ms.toFixed(1) ?? ''} | ${b ? n(b.buffers) : ''} | ${a.ms.toFixed(1)} | ${n(a.buffers)} | ${(a.buffers / Math.max(1, a.leased)).toFixed(1)} |`,
    );
  });
  const big = after.find((a) => a.endpoints === 1000 && a.due === 100_000);
  const bigBefore = before.find((a) => a.endpoints === 1000 && a.due === 100_000);
  if (big && bigBefore) {
    summary(
      import.meta.url,
      `lease round: 100,000 due over 1,000 endpoints, ${big.leased} leased: ${big.ms.toFixed(1)} ms ${big.buffers} buffers (migrations to ${upTo}: ${bigBefore.ms.toFixed(1)} ms ${bigBefore.buffers} buffers; target 5 ms 1,000 buffers ${big.ms < 5 && big.buffers < 1000 ? 'met' : 'MISSED'})`,
      'scale',
    );
  }
}

async function enqueueCost(): Promise<{ alone: number; withEvent: number }> {
  await endpoint('acct_tx', 'fast', 'tx');
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
          await enqueueEvent(fromPostgres(tx), {
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
  return { alone: median(alone), withEvent: median(withEvent) };
}

/** The last run's machine idle share and commits per delivery of `mode`. */
function costText(mode: string): string {
  const last = costs.get(mode)?.at(-1);
  return last
    ? `machine ${(last.idle * 100).toFixed(0)}% idle, ${last.commits.toFixed(3)} commits per delivery`
    : '';
}
/** Stops the workers and the receiver, drops the bench's schema and closes the connections. */
async function cleanUp(): Promise<void> {
  await Promise.all([...children].map(stop));
  server.closeAllConnections();
  server.close();
  await sql.end();
  await admin.unsafe(`drop schema ${benchSchema} cascade`);
  await admin.end();
}
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const progress = (what: string) => console.error(`[bench/delivery ${new Date().toISOString()}] ${what}`);
/** The ordered case's three rates, each the best of `rounds`, the order alternating. */
async function orderedRounds(rounds: number): Promise<Record<OrderedKind, number[]>> {
  const rates: Record<OrderedKind, number[]> = {
    unordered: [],
    ordered: [],
    besideUnordered: [],
    besideOrdered: [],
  };
  const kinds = ['unordered', 'ordered', 'besideUnordered', 'besideOrdered'] as const;
  for (let round = 0; round < rounds; round += 1) {
    for (const kind of round % 2 ? [...kinds].reverse() : kinds) {
      rates[kind].push(await orderedCase(kind));
      progress(`ordered case ${kind}: ${rates[kind].at(-1)?.toFixed(0)}/s`);
    }
  }
  return rates;
}
/** The ordered case's table and its summary line. */
function printOrdered(rates: Record<OrderedKind, number[]>): void {
  const best = (xs: number[]) => Math.max(0, ...xs);
  const resources = Number(process.env.ORDERED_RESOURCES ?? 200);
  console.log(
    `\nOrdered delivery: ${EVENTS} due deliveries about ${resources} resources, 1 worker process, best of each\n`,
  );
  console.log('| case | deliveries/s (each round) | best |');
  console.log('|---|---|--:|');
  for (const [label, key] of [
    ['unordered endpoint (ordering none)', 'unordered'],
    ['per-resource endpoint (one in flight per resource)', 'ordered'],
    ['unordered endpoint beside an unordered one draining the same backlog', 'besideUnordered'],
    [
      'unordered endpoint beside a per-resource one whose stuck resource holds a quarter of it',
      'besideOrdered',
    ],
  ] as const) {
    console.log(
      `| ${label} | ${rates[key].map((x) => x.toFixed(0)).join(', ')} | ${best(rates[key]).toFixed(0)} |`,
    );
  }
  summary(
    import.meta.url,
    `ordered: unordered ${Math.round(best(rates.unordered))}/s, per-resource ${Math.round(best(rates.ordered))}/s; unordered beside unordered ${Math.round(best(rates.besideUnordered))}/s, beside per-resource with a stuck resource ${Math.round(best(rates.besideOrdered))}/s`,
    'ordered',
  );
}
if (process.env.BENCH_ONLY === 'ordered') {
  printOrdered(await orderedRounds(ROUNDS));
  await cleanUp();
  process.exit(0);
}
if (['fairness', 'backlog', 'scale'].includes(process.env.BENCH_ONLY ?? '')) {
  if (process.env.BENCH_ONLY === 'scale') {
    // SCALE_BASELINE=010: first the same model on the schema of migrations up to 010 (a child
    // process of this script), then this one, printed side by side.
    const baseline = process.env.SCALE_BASELINE ? await scaleBaseline(process.env.SCALE_BASELINE) : undefined;
    const plans = await scaleModel();
    if (process.env.BENCH_PLAN) console.log(plans.at(Number(process.env.BENCH_PLAN))?.text);
    for (const plan of plans) {
      progress(
        `scale: ${plan.endpoints} endpoints, ${plan.due} due: ${plan.leased} leased, ${plan.ms.toFixed(2)} ms, ${plan.buffers} buffers`,
      );
    }
    if (process.env.SCALE_JSON)
      console.log(`SCALE_JSON ${JSON.stringify(plans.map(({ text, ...plan }) => plan))}`);
    if (baseline) printScale(baseline, plans, process.env.SCALE_BASELINE ?? '');
  } else if (process.env.BENCH_ONLY === 'fairness') {
    await fairnessPairs(ROUNDS, (alone, beside) =>
      progress(
        `fairness alone ${alone.toFixed(0)}/s, beside ${beside.toFixed(0)}/s: ${((beside / alone) * 100).toFixed(0)}% (load ${loadAverage()})`,
      ),
    );
  } else {
    const idle = await backlogDelay(false);
    const busy = await backlogDelay(true);
    progress(
      `backlog: idle median ${median(idle.delays).toFixed(1)} max ${maximum(idle.delays).toFixed(1)}; beside 100,000 median ${median(busy.delays).toFixed(1)} max ${maximum(busy.delays).toFixed(1)}, ${busy.drainedMeanwhile} drained meanwhile (load ${loadAverage()})`,
    );
  }
  await cleanUp();
  process.exit(0);
}
if (process.env.BENCH_ONLY === 'throughput') {
  // BENCH_MODES (bare,1,2) picks modes; ROUNDS alternates their order like the full run; SPREAD
  // (1) spreads the deliveries over that many endpoints.
  const modes = (process.env.BENCH_MODES ?? 'bare,1,2')
    .split(',')
    .map((m): Mode => (m === 'bare' ? 'bare' : m === '2' ? 2 : 1));
  const spread = Number(process.env.SPREAD ?? 1);
  const seen = await measureRounds(modes, spread, Number(process.env.ROUNDS ?? 1), (mode, rate) => {
    const label = spreadLabel(mode, spread);
    progress(
      `${label}: ${rate.toFixed(0)}/s, ${((lockWaits.get(label)?.at(-1) ?? 0) * 100).toFixed(0)}% of active statements waiting for a lock, ${costText(label)} (load ${loadAverage()})`,
    );
  });
  const [bare, one, two] = [judged(seen.bare ?? []), judged(seen['1'] ?? []), judged(seen['2'] ?? [])];
  progress(
    `median after the first round: bare ${spreadText(bare)}, 1 ${spreadText(one)}, 2 ${spreadText(two)}; 1 vs bare ${(one.rate / bare.rate).toFixed(2)}x, 2 vs 1 ${(two.rate / one.rate).toFixed(2)}x`,
  );
  await cleanUp();
  process.exit(0);
}
try {
  const loadBefore = loadAverage();
  const samples = await measureRounds(['bare', 1, 2], 1, ROUNDS, (mode, rate) =>
    progress(`throughput ${mode}: ${rate.toFixed(0)}/s`),
  );
  const best = (xs: number[] | undefined) => Math.max(0, ...(xs ?? []));
  const [bareJudged, oneJudged, twoJudged] = [
    judged(samples.bare ?? []),
    judged(samples['1'] ?? []),
    judged(samples['2'] ?? []),
  ];
  const [bare, one, two] = [bareJudged.rate, oneJudged.rate, twoJudged.rate];
  // The same 20,000 deliveries spread over 99 endpoints: one endpoint is bound by its own
  // in-flight ceiling whatever the number of processes; many are bound by the processes.
  const spreadSamples = await measureRounds([1, 2], SPREAD, ROUNDS, (mode, rate) =>
    progress(`throughput ${spreadLabel(mode, SPREAD)}: ${rate.toFixed(0)}/s`),
  );

  const { alone, beside } = await fairnessPairs(ROUNDS);
  const orderedRates = await orderedRounds(ROUNDS);
  progress(`fairness alone ${alone.join(', ')}, beside ${beside.join(', ')}`);
  const idle = await backlogDelay(false);
  const delay = await backlogDelay(true);
  progress('backlog done');
  const plans = await scaleModel();
  const cost = await enqueueCost();
  const loadAfter = loadAverage();

  console.log(
    `\nbench/delivery: ${EVENTS} due deliveries to one fast local receiver (204 at once); workers as child processes with concurrency ${CONCURRENCY}, perEndpointConcurrency ${PER_ENDPOINT}, pollMs ${POLL_MS}; ${ROUNDS} rounds, order alternating; throughput judged by the median after each mode's first round, the rest best of each`,
  );
  console.log(`load average before ${loadBefore}, after ${loadAfter} (2 cores, shared)\n`);
  console.log('| mode | deliveries/s (each round) | median after the first | vs bare |');
  console.log('|---|---|--:|--:|');
  for (const [label, key] of [
    ['bare limit: lease 100 with one UPDATE ... SKIP LOCKED, POST them, one UPDATE', 'bare'],
    ['@holdfast/webhook-delivery, 1 worker process', '1'],
    ['@holdfast/webhook-delivery, 2 worker processes', '2'],
  ] as const) {
    const xs = samples[key] ?? [];
    const j = judged(xs);
    console.log(
      `| ${label} | ${xs.map((x) => x.toFixed(0)).join(', ')} | ${spreadText(j)} | ${(j.rate / bare).toFixed(2)}x |`,
    );
  }
  console.log(`\n2 processes vs 1: ${(two / one).toFixed(2)}x (medians after the first round)`);
  const waitShares = (mode: string) =>
    (lockWaits.get(mode) ?? []).map((x) => `${(x * 100).toFixed(0)}%`).join(', ');
  console.log(
    `Active statements waiting for a lock (pg_stat_activity every 10 ms): 1 process ${waitShares('1')}, 2 processes ${waitShares('2')}`,
  );
  console.log(
    `\nThe same ${EVENTS} deliveries spread over ${SPREAD} endpoints (one endpoint is held to its in-flight ceiling, ${PER_ENDPOINT}, whatever the processes; many are not)\n`,
  );
  console.log('| mode | deliveries/s (each round) | best |');
  console.log('|---|---|--:|');
  for (const [label, key] of [
    ['@holdfast/webhook-delivery, 1 worker process', '1'],
    ['@holdfast/webhook-delivery, 2 worker processes', '2'],
  ] as const) {
    const xs = spreadSamples[key] ?? [];
    console.log(`| ${label} | ${xs.map((x) => x.toFixed(0)).join(', ')} | ${best(xs).toFixed(0)} |`);
  }
  console.log(
    `\n2 processes vs 1 over ${SPREAD} endpoints: ${(best(spreadSamples['2']) / best(spreadSamples['1'])).toFixed(2)}x`,
  );

  console.log('\nFairness: 99 fast endpoints, alone and beside one answering after 5 s (1 worker process)\n');
  console.log('| run | fast endpoints deliveries/s (each round) | best |');
  console.log('|---|---|--:|');
  console.log(`| alone | ${alone.map((x) => x.toFixed(0)).join(', ')} | ${best(alone).toFixed(0)} |`);
  console.log(
    `| beside the slow one | ${beside.map((x) => x.toFixed(0)).join(', ')} | ${best(beside).toFixed(0)} |`,
  );
  console.log(`\nbeside / alone: ${((best(beside) / best(alone)) * 100).toFixed(0)}% (target at least 90%)`);
  printOrdered(orderedRates);

  console.log(
    `\nBacklog: one endpoint with 100,000 due deliveries being drained (${delay.drainedMeanwhile} delivered meanwhile); 20 new deliveries to another endpoint, commit to arrival, against the same with nothing else due (poll interval ${POLL_MS} ms):\n`,
  );
  console.log('| | median ms | max ms |');
  console.log('|---|--:|--:|');
  console.log(
    `| nothing else due | ${median(idle.delays).toFixed(1)} | ${maximum(idle.delays).toFixed(1)} |`,
  );
  console.log(
    `| beside the backlog | ${median(delay.delays).toFixed(1)} | ${maximum(delay.delays).toFixed(1)} |`,
  );
  console.log(
    `| the backlog adds | ${(median(delay.delays) - median(idle.delays)).toFixed(1)} | ${(maximum(delay.delays) - maximum(idle.delays)).toFixed(1)} |`,
  );

  console.log('\nScale model: EXPLAIN (ANALYZE, BUFFERS) of one lease round (limit 128), rolled back\n');
  console.log('| endpoints with due work | due deliveries | leased | execution ms | shared buffers |');
  console.log('|--:|--:|--:|--:|--:|');
  for (const plan of plans) {
    console.log(
      `| ${plan.endpoints} | ${plan.due} | ${plan.leased} | ${plan.ms.toFixed(2)} | ${plan.buffers} |`,
    );
  }
  const last = plans[plans.length - 1];
  console.log(
    last?.nested
      ? '\nThe plan of the statement inside holdfast_lease_deliveries at 100,000 due deliveries on one endpoint (auto_explain):\n'
      : '\nThe lease function at 100,000 due deliveries on one endpoint (auto_explain could not be loaded, so not the plan inside it):\n',
  );
  console.log(plans[plans.length - 1]?.text);

  console.log(
    `\nBusiness transaction (begin, insert one order, commit), median of ${TXS}, one subscribed endpoint\n`,
  );
  console.log('| Transaction | Median ms |');
  console.log('|---|---|');
  console.log(`| insert alone | ${cost.alone.toFixed(2)} |`);
  console.log(`| insert + enqueueEvent | ${cost.withEvent.toFixed(2)} |`);
  console.log(`| enqueueEvent adds | ${(cost.withEvent - cost.alone).toFixed(2)} |`);
  // Judged on medians after each mode's first round: one process at least 0.7x the bare limit,
  // two at least 1.0x one.
  const verdict = (ratio: number, target: number) =>
    `${ratio.toFixed(2)}x ${ratio >= target ? 'met' : 'MISSED'}`;
  summary(
    import.meta.url,
    `delivery: 1 process ${Math.round(one)}/s, 2 processes ${Math.round(two)}/s, bare limit ${Math.round(bare)}/s (medians of ${oneJudged.kept} rounds after the first; 1 vs bare ${verdict(one / bare, 0.7)}, 2 vs 1 ${verdict(two / one, 1.0)}; 1 process ${Math.round(oneJudged.low)} to ${Math.round(oneJudged.high)}/s, 2 ${Math.round(twoJudged.low)} to ${Math.round(twoJudged.high)}/s, bare ${Math.round(bareJudged.low)} to ${Math.round(bareJudged.high)}/s)`,
  );
} finally {
  await cleanUp();
}
