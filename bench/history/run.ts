// bench/history: what a growing history of finished deliveries does to the sender. At each size
// (HISTORY_SIZES rows of events, deliveries and attempts, over 30 days and 1,000 endpoints) in
// a database of its own, one run measures: deliveries/s with one worker, the outbox write's p99
// and outbox-insert-to-receipt p99 at 200 events/s offered, one lease round (EXPLAIN ANALYZE
// BUFFERS of the statement the worker sends) with 100,000 due over 1,000 endpoints, the
// deliveries list by endpoint and the attempt log p99, and one day's retention (the package's
// maintenance dropping the oldest day's partitions). Usage:
//   npm run bench:history                      # 0, 1M and 10M rows
//   HISTORY_SIZES=0,100000 npm run bench:history
//   HISTORY_SIZES=10000000 HISTORY_MEASURES=lease npm run bench:history   # one measure, one size
// HISTORY_MEASURES (throughput,latency,lease,reads,depth,retention: all by default) runs only those;
// the summary line is recorded (run.last.txt) only when all ran. HISTORY_WAIT_WHILE names a file
// (a shared machine's "quiet, please") each size waits for to be gone before it starts;
// HISTORY_KEEP=1 keeps the last size's database (the next run drops it first).
// DATABASE_URL names the server (default postgres://postgres@127.0.0.1:5432/postgres); the bench
// creates a database of its own there, HISTORY_DB (default holdfast_bench_history), for each size
// and drops it after, never the one DATABASE_URL names. Ends with
//   history: <size> rows: delivery <x>x of empty, lease <ms> ms <buffers> buffers, list p99 <ms> ms, retention of a day <ms> ms
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import { paginate } from '@holdfast/cursor-pagination';
import type { Db } from '@holdfast/db';
import { migrate } from '@holdfast/db/migrate';
import { fromPostgres, postgresListener } from '@holdfast/db/postgres';
import * as delivery from '@holdfast/webhook-delivery';
import { queueDepth } from '@holdfast/webhook-delivery/prometheus';
import postgres from 'postgres';
import { deliverySort } from '../../examples/reference-server/src/api/webhook-schemas';
import { summary } from '../summary';
import { FILLED_DAYS, fillHistory, HISTORY_ACCOUNT, HISTORY_TYPE, historyDeliveryId, utcDay } from './fill';

const DAY_MS = 86_400_000;
const SIZES = (process.env.HISTORY_SIZES ?? '0,1000000,10000000').split(',').map((s) => Number(s.trim()));
const ENDPOINTS = Number(process.env.HISTORY_ENDPOINTS ?? 1_000);
/** Deliveries per throughput round (to one endpoint), and rounds (the best is kept). */
const TP_EVENTS = Number(process.env.TP_EVENTS ?? 5_000);
const TP_ROUNDS = Number(process.env.TP_ROUNDS ?? 2);
/** Offered events per second, and for how long, for the insert-to-receipt latency. */
const RATE = Number(process.env.RATE ?? 200);
const RATE_SECONDS = Number(process.env.RATE_SECONDS ?? 10);
/** Events sent and delivered before the timed ones, at the same rate (see the latency). */
const LATENCY_WARM = Number(process.env.LATENCY_WARM ?? 200);
/** Due deliveries per history endpoint in the lease round's backlog (100 x 1,000 = 100,000). */
const BACKLOG_PER_ENDPOINT = Number(process.env.BACKLOG_PER_ENDPOINT ?? 100);
const LEASE_ROUNDS = Number(process.env.LEASE_ROUNDS ?? 5);
const READS = Number(process.env.READS ?? 300);
/** Untimed reads on each pooled connection before the timed ones (see the reads). */
const WARM_READS = Number(process.env.WARM_READS ?? 6);
const POOL = 10;
const DEPTH_READS = Number(process.env.DEPTH_READS ?? 20);
/** The worker as the reference server runs it by default. */
const CONCURRENCY = 128;
const PER_ENDPOINT = 200;
/**
 * The worker's lease statement, told from its other statements: it calls the lease function.
 * A new lease function keeps working here as long as its name starts with `holdfast_lease_`.
 */
const LEASE_STATEMENT = /holdfast_lease_\w+\s*\(/;
const MEASURES = ['throughput', 'latency', 'lease', 'reads', 'depth', 'retention'] as const;
type Measure = (typeof MEASURES)[number];
const measures = new Set(
  (process.env.HISTORY_MEASURES ?? MEASURES.join(',')).split(',').map((s) => s.trim()),
) as Set<string>;
for (const m of measures) {
  if (!(MEASURES as readonly string[]).includes(m)) {
    console.error(
      `bench/history: HISTORY_MEASURES holds ${JSON.stringify(m)}, not one of ${MEASURES.join(', ')}`,
    );
    process.exit(1);
  }
}
const runs = (m: Measure) => measures.has(m);
const allMeasures = MEASURES.every(runs);

for (const size of SIZES) {
  if (!Number.isSafeInteger(size) || size < 0) {
    console.error(`bench/history: HISTORY_SIZES holds ${JSON.stringify(size)}, not a row count`);
    process.exit(1);
  }
}
const serverUrl = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const dbName = process.env.HISTORY_DB ?? 'holdfast_bench_history';
if (!/^[a-z_][a-z0-9_]*$/.test(dbName) || `/${dbName}` === serverUrl.pathname) {
  console.error(
    `bench/history: HISTORY_DB ${JSON.stringify(dbName)} must be a plain identifier, not DATABASE_URL's database`,
  );
  process.exit(1);
}
const target = new URL(serverUrl);
target.pathname = `/${dbName}`;
const admin = postgres(serverUrl.toString(), { max: 1, onnotice: () => {} });

// The receiver: 204 at once; counts per path, and the arrival of each latency event (`"n":<i>`).
const counts = new Map<string, number>();
const arrivals = new Map<number, number>();
const server = createServer((req, res) => {
  const key = req.url ?? '';
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    counts.set(key, (counts.get(key) ?? 0) + 1);
    if (key === '/latency') {
      const n = /"n":(\d+)/.exec(Buffer.concat(chunks).toString())?.[1];
      if (n !== undefined && !arrivals.has(Number(n))) arrivals.set(Number(n), performance.now());
    }
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
const receiver = (path: string) => `http://127.0.0.1:${port}/${path}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}
const median = (values: readonly number[]) => percentile(values, 50);

/**
 * One day's retention: the package's maintenance, run at the end of the filled days keeping all
 * but the oldest, must drop that day's partition of each history table (a drop, never a DELETE)
 * and keep nothing else behind it.
 */
async function retainOneDay(db: Db, until: number): Promise<void> {
  const done = await delivery.maintainDeliveryHistory(db, {
    now: () => until,
    retentionDays: FILLED_DAYS - 1,
  });
  const day = new Date(until - FILLED_DAYS * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '');
  const expected = ['holdfast_deliveries', 'holdfast_events', 'holdfast_delivery_attempts'].map(
    (table) => `${table}_p${day}`,
  );
  if (
    done.busy ||
    done.kept.length > 0 ||
    done.dropped.length !== expected.length ||
    !expected.every((name) => done.dropped.includes(name))
  )
    throw new Error(`one day's retention did not drop ${expected.join(', ')}: ${JSON.stringify(done)}`);
}

interface Result {
  rows: number;
  fillSeconds: number;
  perSecond: number;
  latencyP99: number;
  writeP99: number;
  leaseMs: number;
  leaseBuffers: number;
  leased: number;
  listP99: number;
  attemptsP99: number;
  retentionMs: number;
}

async function measure(rows: number): Promise<Result> {
  await admin.unsafe(`drop database if exists ${dbName}`);
  await admin.unsafe(`create database ${dbName}`);
  const sql = postgres(target.toString(), { max: POOL, onnotice: () => {} });
  const listen = postgres(target.toString(), { max: 1, onnotice: () => {} });
  const db = fromPostgres(sql);
  try {
    await migrate(db, delivery.migrations());
    const endpointOptions = { allowPrivateDestinations: true, concurrencyMax: PER_ENDPOINT };
    const history: string[] = [];
    for (let i = 0; i < ENDPOINTS; i += 1) {
      const { endpoint } = await delivery.createEndpoint(
        db,
        { account: HISTORY_ACCOUNT, url: receiver(`history/${i}`) },
        endpointOptions,
      );
      history.push(endpoint.id);
    }
    const { endpoint: fast } = await delivery.createEndpoint(
      db,
      { account: 'acct_fast', url: receiver('fast'), eventTypes: ['bench.fast'] },
      endpointOptions,
    );
    const { endpoint: timed } = await delivery.createEndpoint(
      db,
      { account: 'acct_fast', url: receiver('latency'), eventTypes: ['bench.latency'] },
      endpointOptions,
    );
    void fast;
    void timed;

    // The filled days end where today (UTC) begins; the bench's own deliveries are today's.
    const until = utcDay(Date.now());
    const fillStart = performance.now();
    const filled = await fillHistory(sql, db, { rows, endpoints: history, until });
    await sql.unsafe('vacuum analyze');
    const fillSeconds = (performance.now() - fillStart) / 1000;
    // The fill's gigabytes are written in minutes, a deployment's over 30 days: flushed here, not
    // by a checkpoint in the middle of a measure (the commits at 200/s wait on its writes).
    await sql.unsafe('checkpoint');
    console.log(
      `  ${rows} rows: ${filled} each of events, deliveries, attempts in ${fillSeconds.toFixed(1)} s`,
    );
    // What the history weighs on disk, heap and indexes, per table and per row (for the package
    // README's scale model).
    const sizes = await sql<{ parent: string; bytes: string }[]>`
      select parent, sum(pg_total_relation_size(partition::regclass))::text as bytes
      from holdfast_history_partitions() group by parent order by parent`;
    console.log(
      `  on disk: ${sizes
        .map(
          ({ parent, bytes }) =>
            `${parent} ${(Number(bytes) / 2 ** 20).toFixed(0)} MiB${filled > 0 ? ` (${(Number(bytes) / filled).toFixed(0)} B a row)` : ''}`,
        )
        .join(', ')}`,
    );

    const workerOptions = {
      db,
      listener: postgresListener(listen),
      allowPrivateDestinations: true,
      concurrency: CONCURRENCY,
      perEndpointConcurrency: PER_ENDPOINT,
      pollMs: 100,
      onError: (error: unknown) => console.error('bench worker:', error),
    };

    // Deliveries per second, one worker: TP_EVENTS due in one commit, timed to the last arrival.
    let perSecond = Number.NaN;
    for (let round = 0; runs('throughput') && round < TP_ROUNDS; round += 1) {
      const before = counts.get('/fast') ?? 0;
      await sql.begin(async (tx) => {
        for (let i = 0; i < TP_EVENTS; i += 1) {
          await delivery.enqueueEvent(fromPostgres(tx), {
            account: 'acct_fast',
            type: 'bench.fast',
            resourceId: `fast_${round}_${i}`,
            object: { id: i },
          });
        }
      });
      const worker = delivery.createDeliveryWorker(workerOptions);
      const start = performance.now();
      worker.start();
      // A round that cannot finish in 5 minutes counts what arrived by then.
      const delivered = () => (counts.get('/fast') ?? 0) - before;
      while (delivered() < TP_EVENTS && performance.now() - start < 300_000) await sleep(5);
      const rate = delivered() / ((performance.now() - start) / 1000);
      await worker.stop();
      perSecond = Number.isNaN(perSecond) ? rate : Math.max(perSecond, rate);
    }

    // Outbox insert to receipt at RATE events/s offered, each event committed on its own.
    let latencyP99 = Number.NaN;
    let writeP99 = Number.NaN;
    if (runs('latency')) {
      arrivals.clear();
      const sentAt = new Map<number, number>();
      const writes: number[] = [];
      const worker = delivery.createDeliveryWorker(workerOptions);
      worker.start();
      const total = RATE * RATE_SECONDS;
      // A service's worker has been running when its events come; the worker started here first
      // pays its connections, LISTEN and each pooled connection's first lease round, which held
      // back the events of its first moments and made them the p99 (see the README). LATENCY_WARM
      // events (numbered after the measured ones) go first at the same rate and are waited for,
      // not counted; the first one's time to arrival, the worker's cold start, is printed apart.
      const warmSent: number[] = [];
      for (let w = 0; w < LATENCY_WARM; w += 1) {
        const wait = (warmSent[0] ?? performance.now()) + (w * 1000) / RATE - performance.now();
        if (wait > 0) await sleep(wait);
        warmSent.push(performance.now());
        await delivery.enqueueEvent(db, {
          account: 'acct_fast',
          type: 'bench.latency',
          resourceId: `lat_warm_${w}`,
          object: { n: total + w },
        });
      }
      const warmDeadline = performance.now() + 30_000;
      while (arrivals.size < LATENCY_WARM && performance.now() < warmDeadline) await sleep(10);
      const coldStart = (arrivals.get(total) ?? Number.NaN) - (warmSent[0] ?? Number.NaN);
      const pacedStart = performance.now();
      const inserts: Promise<unknown>[] = [];
      for (let n = 0; n < total; n += 1) {
        const due = pacedStart + (n * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        const sent = performance.now();
        sentAt.set(n, sent);
        inserts.push(
          delivery
            .enqueueEvent(db, {
              account: 'acct_fast',
              type: 'bench.latency',
              resourceId: `lat_${n}`,
              object: { n },
            })
            .then(() => writes.push(performance.now() - sent)),
        );
      }
      await Promise.all(inserts);
      const deadline = performance.now() + 30_000;
      while (arrivals.size < total + LATENCY_WARM && performance.now() < deadline) await sleep(10);
      await worker.stop();
      const latencies = [...sentAt].map(([n, at]) => (arrivals.get(n) ?? Number.POSITIVE_INFINITY) - at);
      latencyP99 = percentile(latencies, 99);
      writeP99 = percentile(writes, 99);
      console.log(
        `  latency: outbox write p50 ${percentile(writes, 50).toFixed(1)} p90 ${percentile(writes, 90).toFixed(1)} p99 ${writeP99.toFixed(1)} ms; insert to receipt p50 ${percentile(latencies, 50).toFixed(1)} p90 ${percentile(latencies, 90).toFixed(1)} p99 ${latencyP99.toFixed(1)} max ${Math.max(...latencies).toFixed(1)} ms (a worker just started: first arrival ${coldStart.toFixed(0)} ms, not counted)`,
      );
    }

    // One lease round with 100,000 due over the 1,000 history endpoints: each lease statement the
    // worker sends is run as EXPLAIN (ANALYZE, BUFFERS) in a transaction rolled back, and the
    // worker is told nothing was due. On one connection of its own, whose first round is not
    // counted: a session's first call of the lease function compiles and plans it, which a
    // worker's connections, warm, do not pay each round.
    const rounds: { ms: number; buffers: number; leased: number }[] = [];
    let firstRound: { ms: number; buffers: number; leased: number } | undefined;
    if (runs('lease')) {
      for (let i = 0; i < BACKLOG_PER_ENDPOINT; i += 1) {
        await delivery.enqueueEvent(db, {
          account: HISTORY_ACCOUNT,
          type: 'backlog.due',
          resourceId: `backlog_${i}`,
          object: { id: i },
        });
      }
      // The workers' repair moved the idle history endpoints' turns to the end, so each backlog
      // delivery appended a wake. The first round after such a burst applies them (every wake of
      // up to 512 endpoints); rounds measured in rolled-back transactions would each apply them
      // again, so they are applied here, committed, and timed apart: the rounds measured are
      // those of a backlog the workers have taken notice of.
      const wakesStart = performance.now();
      const [counted] = await sql<
        { wakes: number }[]
      >`select count(*)::int as wakes from holdfast_endpoint_wakes`;
      const wakes = counted?.wakes ?? 0;
      while ((await sql`select 1 from holdfast_endpoint_wakes limit 1`).length > 0) {
        await sql`select holdfast_queue_wakes(512)`;
      }
      console.log(
        `  the backlog's ${wakes} wakes applied in ${(performance.now() - wakesStart).toFixed(0)} ms`,
      );
      await sql.unsafe('analyze');
      const explainer = postgres(target.toString(), { max: 1, onnotice: () => {} });
      const explaining: Db = {
        async query<Row>(text: string, values?: readonly unknown[]): Promise<Row[]> {
          if (!LEASE_STATEMENT.test(text) || rounds.length >= LEASE_ROUNDS)
            return db.query<Row>(text, values);
          const rolledBack = new Error('rolled back');
          try {
            await explainer.begin(async (tx) => {
              const [plan] = await tx.unsafe(`explain (analyze, buffers, format json) ${text}`, [
                ...(values ?? []),
              ] as never[]);
              const [root] = (
                plan as unknown as {
                  'QUERY PLAN': { Plan: Record<string, number>; 'Execution Time': number }[];
                }
              )['QUERY PLAN'];
              if (root) {
                const round = {
                  ms: root['Execution Time'],
                  buffers: (root.Plan['Shared Hit Blocks'] ?? 0) + (root.Plan['Shared Read Blocks'] ?? 0),
                  leased: root.Plan['Actual Rows'] ?? 0,
                };
                if (firstRound) rounds.push(round);
                else firstRound = round;
              }
              throw rolledBack;
            });
          } catch (error) {
            if (error !== rolledBack) throw error;
          }
          return [];
        },
      };
      const leaseWorker = delivery.createDeliveryWorker({ ...workerOptions, db: explaining, pollMs: 50 });
      leaseWorker.start();
      while (rounds.length < LEASE_ROUNDS) await sleep(20);
      await leaseWorker.stop();
      await explainer.end();
      console.log(
        `  lease rounds: the first on its connection ${firstRound?.ms.toFixed(1)} ms ${firstRound?.buffers} buffers (not counted), then ${rounds.map((r) => `${r.ms.toFixed(1)} ms ${r.buffers}`).join(', ')}`,
      );
    }
    const leaseMs = median(rounds.map((r) => r.ms));
    const leaseBuffers = median(rounds.map((r) => r.buffers));
    const leased = median(rounds.map((r) => r.leased));

    // The deliveries list of one endpoint (GET /v1/deliveries?endpoint=, first page, as the
    // reference server runs it) and the attempt log of one delivery (listAttempts).
    const keyring = { current: 'k1', keys: { k1: 'bench-history-cursor-key-of-32-bytes!!' } };
    // The baseline: the same list with the page size sent as a parameter (`limit $n`), as
    // `paginate` sent it before 2026-11-29. PostgreSQL costs the plan it would keep for that
    // statement as if the limit let a tenth of the rows through, so it plans every call afresh.
    const limitAsParameter = (on: Db): Db => ({
      ...on,
      query: (text, values = []) => {
        const literal = /limit (\d+)$/.exec(text);
        if (!literal) throw new Error('the list no longer ends with a literal limit');
        return on.query(`${text.slice(0, literal.index)}limit $${values.length + 1}::int`, [
          ...values,
          Number(literal[1]),
        ]);
      },
    });
    const listPage = async (on: Db): Promise<number> => {
      const endpoint = history[Math.floor(Math.random() * history.length)] ?? '';
      const start = performance.now();
      await paginate(on, {
        from: 'holdfast_deliveries',
        where: {
          text: 'account_id = $1 and event_type = any($2::text[])',
          values: [HISTORY_ACCOUNT, [HISTORY_TYPE, 'backlog.due']],
        },
        allowlist: deliverySort,
        filterColumns: { endpoint: 'endpoint_id' },
        filter: { endpoint },
        binding: { account: HISTORY_ACCOUNT, resource: 'deliveries' },
        keyring,
      });
      return performance.now() - start;
    };
    const read = async (on: Db): Promise<{ list: number; attempts?: number }> => {
      const list = await listPage(on);
      if (filled === 0) return { list };
      const id = historyDeliveryId(1 + Math.floor(Math.random() * filled), filled, until);
      const start = performance.now();
      const attempts = await delivery.listAttempts(on, { account: HISTORY_ACCOUNT, id });
      if (attempts?.length !== 1)
        throw new Error(`the attempt log of ${id} holds ${attempts?.length} attempts`);
      return { list, attempts: performance.now() - start };
    };
    // A service's pooled connections live long. A connection's first runs of a statement read the
    // catalog entries of every partition it plans over and of their indexes (the list has no time
    // range: all of them), which a service pays once per connection: each of the pool's
    // connections first runs both reads WARM_READS times, printed apart and not counted, as the
    // lease round's first call on its connection is not.
    const coldList: number[] = [];
    const coldAttempts: number[] = [];
    if (runs('reads')) {
      const connections = await Promise.all(Array.from({ length: POOL }, () => sql.reserve()));
      for (const connection of connections) {
        for (let i = 0; i < WARM_READS; i += 1) {
          const t = await read(fromPostgres(connection));
          coldList.push(t.list);
          if (t.attempts !== undefined) coldAttempts.push(t.attempts);
          await listPage(limitAsParameter(fromPostgres(connection)));
        }
      }
      for (const connection of connections) connection.release();
      console.log(
        `  reads: the first ${WARM_READS} on each of ${POOL} connections (not counted): list p50 ${percentile(coldList, 50).toFixed(1)} p99 ${percentile(coldList, 99).toFixed(1)} ms, attempt log p99 ${coldAttempts.length > 0 ? percentile(coldAttempts, 99).toFixed(1) : '-'} ms`,
      );
    }
    const listTimes: number[] = [];
    const attemptTimes: number[] = [];
    const baselineTimes: number[] = [];
    for (let i = 0; runs('reads') && i < READS; i += 1) {
      // The baseline's list beside each timed read, first on every other one.
      if (i % 2 === 1) baselineTimes.push(await listPage(limitAsParameter(db)));
      const t = await read(db);
      listTimes.push(t.list);
      if (t.attempts !== undefined) attemptTimes.push(t.attempts);
      if (i % 2 === 0) baselineTimes.push(await listPage(limitAsParameter(db)));
    }
    if (listTimes.length > 0)
      console.log(
        `  reads: list p50 ${percentile(listTimes, 50).toFixed(1)} p99 ${percentile(listTimes, 99).toFixed(1)} ms${attemptTimes.length > 0 ? `, attempt log p50 ${percentile(attemptTimes, 50).toFixed(1)} p99 ${percentile(attemptTimes, 99).toFixed(1)} ms` : ''}; the list with its limit a parameter (before 2026-11-29): p50 ${percentile(baselineTimes, 50).toFixed(1)} p99 ${percentile(baselineTimes, 99).toFixed(1)} ms`,
      );

    // The queue's depth as a metrics scrape reads it (`queueDepth`, the Prometheus gauges): a new
    // reader each time, so no call shares another's result.
    if (runs('depth')) {
      const depths: number[] = [];
      let dead = 0;
      for (let i = 0; i < DEPTH_READS; i += 1) {
        const start = performance.now();
        dead = (await queueDepth(db)()).dead;
        depths.push(performance.now() - start);
      }
      console.log(
        `  queue depth (a metrics scrape): median ${percentile(depths, 50).toFixed(1)} ms, p99 ${percentile(depths, 99).toFixed(1)} ms over ${DEPTH_READS} (${dead} dead)`,
      );
    }

    // One day's retention: the oldest of the 30 filled days goes.
    let retentionMs = Number.NaN;
    if (runs('retention')) {
      const retentionStart = performance.now();
      await retainOneDay(db, until);
      retentionMs = performance.now() - retentionStart;
    }

    return {
      rows,
      fillSeconds,
      perSecond,
      latencyP99,
      writeP99,
      leaseMs,
      leaseBuffers,
      leased,
      listP99: listTimes.length > 0 ? percentile(listTimes, 99) : Number.NaN,
      attemptsP99: attemptTimes.length > 0 ? percentile(attemptTimes, 99) : Number.NaN,
      retentionMs,
    };
  } finally {
    await listen.end();
    await sql.end();
    // HISTORY_KEEP=1 leaves the last size's database for a look (EXPLAIN of a read, sizes).
    if (process.env.HISTORY_KEEP !== '1') await admin.unsafe(`drop database if exists ${dbName}`);
  }
}

const label = (rows: number) =>
  rows >= 1_000_000 && rows % 1_000_000 === 0
    ? `${rows / 1_000_000}M`
    : rows >= 1_000 && rows % 1_000 === 0
      ? `${rows / 1_000}k`
      : String(rows);

const results: Result[] = [];
try {
  for (const rows of SIZES) {
    // A shared machine's "quiet, please" file: each size waits while it exists.
    const waitWhile = process.env.HISTORY_WAIT_WHILE;
    while (waitWhile && existsSync(waitWhile)) await sleep(15_000);
    console.log(`history: ${label(rows)} rows (load average ${loadavg()[0]?.toFixed(1)})`);
    results.push(await measure(rows));
  }
} finally {
  server.close();
  await admin.end();
}

const empty = results.find((r) => r.rows === 0);
const ratio = (r: Result) => (empty ? r.perSecond / empty.perSecond : Number.NaN);
console.log('');
console.log(
  '| Rows | Fill (s) | Deliveries/s, 1 worker | vs empty | Outbox write p99 at 200/s (ms) | Insert-to-receipt p99 at 200/s (ms) | Lease round (ms) | Buffers | Leased | List p99 (ms) | Attempt log p99 (ms) | Retention of a day (ms) |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of results) {
  console.log(
    `| ${label(r.rows)} | ${r.fillSeconds.toFixed(0)} | ${r.perSecond.toFixed(0)} | ${ratio(r).toFixed(2)}x | ${r.writeP99.toFixed(1)} | ${r.latencyP99.toFixed(1)} | ${r.leaseMs.toFixed(1)} | ${r.leaseBuffers} | ${r.leased} | ${r.listP99.toFixed(1)} | ${Number.isNaN(r.attemptsP99) ? '' : r.attemptsP99.toFixed(1)} | ${r.retentionMs.toFixed(0)} |`,
  );
}
const last = results.at(-1);
if (last) {
  const line = `history: ${label(last.rows)} rows: delivery ${ratio(last).toFixed(2)}x of empty, lease ${last.leaseMs.toFixed(1)} ms ${last.leaseBuffers} buffers, list p99 ${last.listP99.toFixed(1)} ms, retention of a day ${last.retentionMs.toFixed(0)} ms`;
  // Only a run of every measure is the bench's result.
  if (allMeasures) summary(import.meta.url, line);
  else console.log(`\n${line}`);
}
process.exit(0);
