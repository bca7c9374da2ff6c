import { createServer as createTcpServer, type Socket, connect as tcpConnect } from 'node:net';
import { fromPg, pgListener } from '@holdfast/db/pg';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDeliveryWorker, createEndpoint, enqueueEvent, migrations } from '../src/index';
import { endPools, pgPool } from './fixtures/db';
import { webhookReceiver } from './fixtures/receiver';

// The worker on node-postgres while its database fails under it: backends terminated every
// few dozen milliseconds, and the server unreachable for a while (every connection cut, new
// ones refused: what a stopped PostgreSQL looks like to a client). The process must not crash,
// and every delivery must end succeeded with exactly one attempt logged. node-postgres only:
// postgres.js 3.4.x can end the process on a terminated backend (porsager/postgres#1154, #1208).

afterAll(endPools);

const EVENTS = 200;
const ACCOUNT = 'acct_faults';

let db: TestDatabase;
let hook: Awaited<ReturnType<typeof webhookReceiver>>;

/** Requests per `webhook-id`. */
const requestsById = () => {
  const ids = new Map<string, number>();
  for (const id of hook.received) ids.set(id, (ids.get(id) ?? 0) + 1);
  return ids;
};

/** Every process-level error while `work` runs: an unhandled one would have ended a service. */
async function noCrash(work: () => Promise<void>): Promise<unknown[]> {
  const crashes: unknown[] = [];
  const onCrash = (error: unknown) => crashes.push(error);
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
  try {
    await work();
  } finally {
    process.off('uncaughtException', onCrash);
    process.off('unhandledRejection', onCrash);
  }
  return crashes;
}

async function enqueue(count: number): Promise<void> {
  await createEndpoint(
    fromPostgres(db.sql),
    { account: ACCOUNT, url: hook.url },
    { allowPrivateDestinations: true },
  );
  for (let i = 0; i < count; i += 1) {
    await enqueueEvent(fromPostgres(db.sql), {
      account: ACCOUNT,
      type: 'order.created',
      resourceId: `ord_${i}`,
      object: {},
    });
  }
}

async function until(check: () => Promise<boolean>, what: string, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const succeeded = async () =>
  (
    await db.sql<
      { n: number }[]
    >`select count(*)::int as n from holdfast_deliveries where status = 'succeeded'`
  )[0]?.n ?? 0;

/** What the run left: deliveries by status, attempts per delivery, places still counted in flight. */
async function ledger() {
  const [row] = await db.sql<{ unfinished: number; attempts: number; doubled: number; in_flight: number }[]>`
    select
      (select count(*)::int from holdfast_deliveries where status <> 'succeeded') as unfinished,
      (select count(*)::int from holdfast_delivery_attempts) as attempts,
      (select count(*)::int from (select delivery_id from holdfast_delivery_attempts
        group by delivery_id having count(*) > 1) x) as doubled,
      (select coalesce(sum(p.in_flight - coalesce((select sum(r.released) from holdfast_endpoint_releases r
        where r.endpoint_id = p.endpoint_id), 0)), 0)::int from holdfast_endpoint_pacing p) as in_flight`;
  return row;
}

function worker(pool: ReturnType<typeof pgPool>, errors: unknown[]) {
  return createDeliveryWorker({
    db: fromPg(pool),
    // Its listening client is terminated and cut with the rest.
    listener: pgListener(pool),
    schedule: [0, 0, 0],
    unsafeTimeoutMs: 2_000,
    // A lease whose outcome could not be written (nor given back) is taken over soon after.
    leaseMs: 3_000,
    pollMs: 10,
    concurrency: 16,
    allowPrivateDestinations: true,
    onError: (error) => errors.push(error),
  });
}

describe.skipIf(!realPostgres)('the worker on node-postgres while the database fails', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
    for (const migration of migrations()) await db.sql.unsafe(migration.sql);
    hook = await webhookReceiver();
  });
  afterAll(async () => {
    hook.close();
    await db.close();
  });
  beforeEach(async () => {
    await db.sql`truncate holdfast_webhook_endpoints, holdfast_events, holdfast_delivery_attempts, holdfast_resource_sequences, holdfast_notifications cascade`;
    hook.received.length = 0;
  });

  it('survives its backends terminated every 40 ms: every delivery succeeds once, logged once', async () => {
    await enqueue(EVENTS);
    const name = `holdfast_faults_${process.pid}`;
    const pool = pgPool(db, 6, { application_name: name });
    const errors: unknown[] = [];
    let terminated = 0;
    const crashes = await noCrash(async () => {
      const w = worker(pool, errors);
      const killer = setInterval(() => {
        void db.sql<{ pid: number }[]>`
          select pg_terminate_backend(pid) as pid from pg_stat_activity where application_name = ${name}`.then(
          (rows) => {
            terminated += rows.length;
          },
          () => {},
        );
      }, 40);
      try {
        w.start();
        await until(async () => (await succeeded()) === EVENTS || terminated > 400, 'the run');
        // At least some connections died mid-run, or the test proved nothing.
        expect(terminated).toBeGreaterThan(0);
        clearInterval(killer);
        await until(async () => (await succeeded()) === EVENTS, 'every delivery');
      } finally {
        clearInterval(killer);
        await w.stop();
      }
    });
    expect(crashes).toEqual([]);
    expect(await ledger()).toEqual({ unfinished: 0, attempts: EVENTS, doubled: 0, in_flight: 0 });
    expect(requestsById().size).toBe(EVENTS);
    const resent = hook.received.length - EVENTS;
    console.log(
      `terminated backends: ${terminated} terminations, ${errors.length} errors reported to onError, ${resent} requests sent again after a lost outcome`,
    );
  });

  it('survives the database unreachable (connections cut, new ones refused) and delivers everything once it is back', async () => {
    await enqueue(EVENTS);
    const proxy = await cuttableProxy();
    const url = new URL(process.env.DATABASE_URL ?? '');
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    const pool = pgPool(db, 6, { connectionString: url.toString(), connectionTimeoutMillis: 1_000 });
    const errors: unknown[] = [];
    const crashes = await noCrash(async () => {
      const w = worker(pool, errors);
      try {
        w.start();
        await until(async () => (await succeeded()) >= EVENTS / 4, 'a quarter delivered');
        await proxy.stop();
        const reported = errors.length;
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        // The loop kept going and said why it could not work.
        expect(errors.length).toBeGreaterThan(reported);
        await proxy.start();
        await until(async () => (await succeeded()) === EVENTS, 'every delivery after the restart');
      } finally {
        await w.stop();
        await proxy.stop();
      }
    });
    expect(crashes).toEqual([]);
    expect(await ledger()).toEqual({ unfinished: 0, attempts: EVENTS, doubled: 0, in_flight: 0 });
    expect(requestsById().size).toBe(EVENTS);
  });
});

/**
 * A TCP proxy to the test's PostgreSQL that can be stopped (every connection through it cut, new
 * ones refused) and started again on the same port.
 */
async function cuttableProxy(): Promise<{ port: number; stop(): Promise<void>; start(): Promise<void> }> {
  const target = new URL(process.env.DATABASE_URL ?? '');
  const sockets = new Set<Socket>();
  const server = createTcpServer((client) => {
    const upstream = tcpConnect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) =>
      server.listen(port, '127.0.0.1', () => {
        const address = server.address();
        port = typeof address === 'object' && address ? address.port : 0;
        resolve();
      }),
    );
  await listen();
  return {
    get port() {
      return port;
    },
    async stop() {
      if (!server.listening) return;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    start: listen,
  };
}
