// POST with an Idempotency-Key against the same POST without one, and a replay, side by side on
// PostgreSQL (issue 5, "Must show"). Usage:
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//     npx tsx --conditions=@holdfast/source bench/idempotency/run.ts
// One Hono app in process (no network between client and app, so the database is what is
// measured): POST /v1/payments inserts one payment row inside withIdempotency(). The three
// kinds run interleaved, round after round, on one direct connection. A second pass, through a
// TCP relay, counts statements (postgres.js's `debug` hook) and round trips (bursts of client
// bytes that follow server bytes: pipelined statements share one).
// In the same rounds, the flow every driver shares, `idempotent(db, ...)` inside the caller's
// own transaction, runs through postgres.js (`fromPostgres(tx)`) and through node-postgres
// (`fromPg(client)`), each on its own single connection, printed side by side.
import { randomBytes } from 'node:crypto';
import { createServer, connect as netConnect } from 'node:net';
import type { Db } from '@holdfast/db';
import { migrate } from '@holdfast/db/migrate';
import { fromPg } from '@holdfast/db/pg';
import { fromPostgres, postgresTransaction } from '@holdfast/db/postgres';
import { type IdempotentRequest, idempotent, migrations } from '@holdfast/idempotency';
import { withIdempotency } from '@holdfast/idempotency/hono';
import { onProblem } from '@holdfast/problem-details/hono';
import { jsonBody, requestId } from '@holdfast/request-guards/hono';
import { type Context, Hono } from 'hono';
import pg from 'pg';
import postgres from 'postgres';
import { summary } from '../summary';

const ROUNDS = Number(process.env.ROUNDS ?? 400);
const WARMUP = 30;

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error('bench/idempotency needs DATABASE_URL (a real PostgreSQL)');
  process.exit(1);
}
const url = new URL(databaseUrl);
const benchSchema = `bench_idempotency_${randomBytes(4).toString('hex')}`;

let statements = 0;
let roundTrips = 0;

/**
 * A TCP relay in front of PostgreSQL that counts round trips: each burst of client bytes that
 * follows server bytes starts one. Pipelined statements travel in one burst. Only the counting
 * pass goes through it; the timed pass connects directly.
 */
async function countingRelay(): Promise<{ port: number; close(): void }> {
  const server = createServer((client) => {
    const upstream = netConnect(Number(url.port || 5432), url.hostname);
    let serverSpoke = true;
    client.on('data', (chunk) => {
      if (serverSpoke) roundTrips += 1;
      serverSpoke = false;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      serverSpoke = true;
      client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('relay has no port');
  return { port: address.port, close: () => server.close() };
}

function client(target: string, count: boolean): postgres.Sql {
  return postgres(target, {
    max: 1,
    onnotice: () => {},
    connection: { search_path: benchSchema },
    ...(count
      ? {
          debug: () => {
            statements += 1;
          },
        }
      : {}),
  });
}

function pgClient(target: string): pg.Client {
  return new pg.Client({ connectionString: target, options: `-c search_path=${benchSchema}` });
}

/** Runs `work` in a transaction of a node-postgres client, `BEGIN` to `COMMIT` (or `ROLLBACK`). */
async function pgTransaction<T>(client: pg.Client, work: () => Promise<T>): Promise<T> {
  await client.query('begin');
  try {
    const result = await work();
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback');
    throw error;
  }
}

function requestOf(c: Context): IdempotentRequest {
  const id: string | undefined = c.get('requestId');
  return {
    key: c.req.header('Idempotency-Key'),
    account: 'acct_bench',
    method: c.req.method,
    path: c.req.path,
    body: c.get('jsonBody'),
    ...(id === undefined ? {} : { requestId: id }),
  };
}

const INSERT_PAYMENT = `insert into payments (account, amount, currency) values ('acct_bench', 500, 'EUR') returning id`;

/** The answer for the inserted row, the same whichever driver inserted it. */
function created(rowId: unknown) {
  const id = `pay_${String(rowId)}`;
  return {
    status: 201,
    headers: { Location: `/v1/payments/${id}` },
    body: { id, amount: 500, currency: 'EUR' },
  } as const;
}

/**
 * The shared flow: the claim, the INSERT and the stored answer in the caller's transaction,
 * through the database boundary, on postgres.js or node-postgres.
 */
function boundaryApp(run: (handler: (db: Db) => Promise<Response>) => Promise<Response>): Hono {
  const app = new Hono();
  app.use(requestId());
  app.onError(onProblem());
  app.use('/v1/*', jsonBody());
  app.post('/v1/payments', (c) =>
    run((db) =>
      idempotent(
        (work) => work(db, db),
        requestOf(c),
        async () => {
          const [row] = await db.query<{ id: string }>(INSERT_PAYMENT);
          return created(row?.id);
        },
      ),
    ),
  );
  return app;
}

function paymentsApp(sql: postgres.Sql): Hono {
  const app = new Hono();
  app.use(requestId());
  app.onError(onProblem());
  app.use('/v1/*', jsonBody());
  app.post('/v1/payments', (c) =>
    withIdempotency(c, { transaction: postgresTransaction(sql), account: 'acct_bench' }, async (tx) => {
      const [row] = await tx<{ id: number }[]>`
        insert into payments (account, amount, currency) values ('acct_bench', 500, 'EUR') returning id`;
      const id = `pay_${row?.id}`;
      return {
        status: 201,
        headers: { Location: `/v1/payments/${id}` },
        body: { id, amount: 500, currency: 'EUR' },
      };
    }),
  );
  return app;
}

const post = (app: Hono, key: string | undefined) =>
  app.request('/v1/payments', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(key === undefined ? {} : { 'Idempotency-Key': key }) },
    body: JSON.stringify({ amount: 500, currency: 'EUR' }),
  });

type Kind = 'without key' | 'with key (first)' | 'replay';
const samples: Record<Kind, number[]> = { 'without key': [], 'with key (first)': [], replay: [] };
type Driver = 'postgres.js' | 'node-postgres';
type BoundaryKind = 'with key (first)' | 'replay';
const boundarySamples: Record<Driver, Record<BoundaryKind, number[]>> = {
  'postgres.js': { 'with key (first)': [], replay: [] },
  'node-postgres': { 'with key (first)': [], replay: [] },
};
const boundaryRoundTrips: Record<Driver, Record<BoundaryKind, number>> = {
  'postgres.js': { 'with key (first)': 0, replay: 0 },
  'node-postgres': { 'with key (first)': 0, replay: 0 },
};
const perRequest: Record<Kind, { statements: number; roundTrips: number }> = {
  'without key': { statements: 0, roundTrips: 0 },
  'with key (first)': { statements: 0, roundTrips: 0 },
  replay: { statements: 0, roundTrips: 0 },
};

async function timed(app: Hono, kind: Kind, key: string | undefined): Promise<number> {
  const start = performance.now();
  const response = await post(app, key);
  const elapsed = performance.now() - start;
  await response.arrayBuffer();
  const expected = kind === 'replay' ? 'true' : null;
  if (response.status !== 201 || response.headers.get('Idempotent-Replayed') !== expected) {
    throw new Error(`${kind}: unexpected ${response.status} ${response.headers.get('Idempotent-Replayed')}`);
  }
  return elapsed;
}

async function measure(app: Hono, kind: Kind, key: string | undefined, record: boolean): Promise<void> {
  const elapsed = await timed(app, kind, key);
  if (record) samples[kind].push(elapsed);
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

const sql = client(databaseUrl, false);
const boundarySql = client(databaseUrl, false);
const pgDirect = pgClient(databaseUrl);
const relay = await countingRelay();
const relayUrl = new URL(databaseUrl);
relayUrl.hostname = '127.0.0.1';
relayUrl.port = String(relay.port);
const counted = client(relayUrl.toString(), true);
const countedPg = pgClient(relayUrl.toString());
try {
  await sql.unsafe(`create schema ${benchSchema}`);
  await migrate(fromPostgres(sql), migrations());
  await sql`create table payments (id bigserial primary key, account text not null, amount bigint not null, currency text not null)`;
  await Promise.all([pgDirect.connect(), countedPg.connect()]);
  const app = paymentsApp(sql);
  const postgresJsApp = (s: postgres.Sql) =>
    boundaryApp((handler) => s.begin((tx) => handler(fromPostgres(tx))) as Promise<Response>);
  const nodePostgresApp = (c: pg.Client) =>
    boundaryApp((handler) => pgTransaction(c, () => handler(fromPg(c))));
  const boundary: Record<Driver, Hono> = {
    'postgres.js': postgresJsApp(boundarySql),
    'node-postgres': nodePostgresApp(pgDirect),
  };
  const replayKey = 'bench-replay';
  await post(app, replayKey);
  for (const driver of ['postgres.js', 'node-postgres'] as const)
    await post(boundary[driver], `${replayKey}-${driver}`);
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    const record = round >= WARMUP;
    await measure(app, 'without key', undefined, record);
    await measure(app, 'with key (first)', `bench-${round}`, record);
    await measure(app, 'replay', replayKey, record);
    // Which driver goes first alternates, so neither always follows the same request.
    const drivers =
      round % 2 === 0
        ? (['postgres.js', 'node-postgres'] as const)
        : (['node-postgres', 'postgres.js'] as const);
    for (const driver of drivers) {
      const first = await timed(boundary[driver], 'with key (first)', `bench-${driver}-${round}`);
      const replay = await timed(boundary[driver], 'replay', `${replayKey}-${driver}`);
      if (record) {
        boundarySamples[driver]['with key (first)'].push(first);
        boundarySamples[driver].replay.push(replay);
      }
    }
  }
  // Counting pass: warm the prepared statements, then count one request of each kind.
  const countedApp = paymentsApp(counted);
  for (let round = 0; round < 3; round++) {
    for (const [kind, key] of [
      ['without key', undefined],
      ['with key (first)', `counted-${round}`],
      ['replay', replayKey],
    ] as const) {
      const before = { statements, roundTrips };
      await measure(countedApp, kind, key, false);
      perRequest[kind] = {
        statements: statements - before.statements,
        roundTrips: roundTrips - before.roundTrips,
      };
    }
  }
  // Round trips of the shared flow on each driver, one connection through the relay.
  const countedBoundary: Record<Driver, Hono> = {
    'postgres.js': postgresJsApp(counted),
    'node-postgres': nodePostgresApp(countedPg),
  };
  for (const driver of ['postgres.js', 'node-postgres'] as const) {
    for (let round = 0; round < 3; round++) {
      for (const [kind, key] of [
        ['with key (first)', `counted-${driver}-${round}`],
        ['replay', `${replayKey}-${driver}`],
      ] as const) {
        const before = roundTrips;
        await timed(countedBoundary[driver], kind, key);
        boundaryRoundTrips[driver][kind] = roundTrips - before;
      }
    }
  }
  const rows: string[] = [];
  rows.push('| POST /v1/payments (one INSERT) | p50 ms | p99 ms | statements | round trips |');
  rows.push('|---|---:|---:|---:|---:|');
  for (const kind of ['without key', 'with key (first)', 'replay'] as const) {
    const values = samples[kind];
    rows.push(
      `| ${kind} | ${percentile(values, 50).toFixed(3)} | ${percentile(values, 99).toFixed(3)} | ${perRequest[kind].statements} | ${perRequest[kind].roundTrips} |`,
    );
  }
  console.log(
    `PostgreSQL ${url.hostname}:${url.port || 5432}, ${ROUNDS} rounds after ${WARMUP} warm-up, one connection\n`,
  );
  console.log(rows.join('\n'));
  const side: string[] = [];
  side.push('');
  side.push(
    "| idempotent(db) in the caller's transaction | postgres.js p50 ms | node-postgres p50 ms | node-postgres / postgres.js | postgres.js p99 ms | node-postgres p99 ms | round trips (postgres.js, node-postgres) |",
  );
  side.push('|---|---:|---:|---:|---:|---:|---:|');
  for (const kind of ['with key (first)', 'replay'] as const) {
    const js = boundarySamples['postgres.js'][kind];
    const node = boundarySamples['node-postgres'][kind];
    side.push(
      `| ${kind} | ${percentile(js, 50).toFixed(3)} | ${percentile(node, 50).toFixed(3)} | ${(percentile(node, 50) / percentile(js, 50)).toFixed(3)} | ${percentile(js, 99).toFixed(3)} | ${percentile(node, 99).toFixed(3)} | ${boundaryRoundTrips['postgres.js'][kind]}, ${boundaryRoundTrips['node-postgres'][kind]} |`,
    );
  }
  console.log(side.join('\n'));
  const jsFirst = percentile(boundarySamples['postgres.js']['with key (first)'], 50);
  const nodeFirst = percentile(boundarySamples['node-postgres']['with key (first)'], 50);
  const change = (nodeFirst / jsFirst - 1) * 100;
  summary(
    import.meta.url,
    `idempotency: postgres.js p50 ${jsFirst.toFixed(3)} ms, node-postgres p50 ${nodeFirst.toFixed(3)} ms (${change >= 0 ? '+' : ''}${change.toFixed(1)}%; first request, idempotent(db) in the caller's transaction)`,
  );
} finally {
  await sql.unsafe(`drop schema if exists ${benchSchema} cascade`);
  await Promise.all([sql.end(), boundarySql.end(), counted.end(), pgDirect.end(), countedPg.end()]);
  relay.close();
}
