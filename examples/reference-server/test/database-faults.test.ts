import { randomBytes } from 'node:crypto';
import { connect, type Database, type Sql } from '@holdfast/pg';
import { childDatabaseUrl, createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Answer, call, KEYS, startTestServer } from './api-harness';
import { type Child, startServerProcess } from './process-harness';
import { eventually } from './webhooks-harness';

// Issue 28, findings 3 and 4: the database can fail without taking the server with it. A table
// locked by another session answers 503 with Retry-After within the API's timeouts, not a wait;
// the workers' pool and the API's are apart, so neither starves the other; backends terminated
// under load (porsager/postgres#1208) never end the process. All of it needs DATABASE_URL: PGlite
// is one session, so no other session can hold a lock, there is no backend to terminate, and the
// API and the workers share its one connection (README, "Database pools and timeouts").

/** A problem answer the server may give while the database fails: 503 with Retry-After. */
function unavailable(answer: Answer): boolean {
  return (
    answer.status === 503 &&
    answer.headers.get('content-type') === 'application/problem+json' &&
    /^\d+$/.test(answer.headers.get('retry-after') ?? '') &&
    String(answer.body.code) === 'service_unavailable'
  );
}

/** Holds `lock table <table>` on a connection of `sql` until `work` is done. */
async function whileLocked(sql: Sql, table: string, work: () => Promise<void>): Promise<void> {
  await sql.begin(async (tx) => {
    await tx.unsafe(`lock table ${table} in access exclusive mode`);
    await work();
  });
}

/** Waits until some session waits for a lock on `table` (schema-qualified, so only this test's). */
function someoneWaits(sql: Sql, table: string, what = `a session waiting on ${table}`): Promise<true> {
  return eventually(
    async () => {
      const [row] = await sql<{ waiting: number }[]>`
      select count(*)::int as waiting from pg_locks where relation = ${table}::regclass and not granted`;
      return row && row.waiting > 0 ? true : undefined;
    },
    15_000,
    what,
  );
}

describe.skipIf(!realPostgres)('statement and lock timeouts of the API (needs DATABASE_URL)', () => {
  for (const [what, env] of [
    ['lock_timeout', { HOLDFAST_LOCK_TIMEOUT: '300ms', HOLDFAST_STATEMENT_TIMEOUT: '10s' }],
    ['statement_timeout', { HOLDFAST_LOCK_TIMEOUT: '10s', HOLDFAST_STATEMENT_TIMEOUT: '300ms' }],
  ] as const) {
    it(`answers 503 with Retry-After on a locked table (${what}), and other tables of other accounts as ever`, async () => {
      const t = await startTestServer(env);
      try {
        const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
          call(t.url, method, path, options);
        const [schema] = await t.server.db.query<{ name: string }>('select current_schema() as name');
        const orders = `${schema?.name}.holdfast_orders`;
        // A session without timeouts holds the lock: the API's statements wait for it.
        const holder = await connect({ databaseUrl: process.env.DATABASE_URL, max: 1 });
        try {
          await whileLocked(holder.sql, orders, async () => {
            const created = await api('POST', '/v1/orders', { body: { currency: 'EUR', total: 100 } });
            expect(created.status).toBe(503);
            expect(unavailable(created)).toBe(true);
            expect(created.headers.get('retry-after')).toBe('2');
            expect(created.body.detail).toContain('did not answer in time');
            const listed = await api('GET', '/v1/orders');
            expect(unavailable(listed)).toBe(true);
            expect((await api('GET', '/v1/payments', { key: KEYS.other })).status).toBe(200);
            expect((await api('GET', '/v1/webhook-endpoints', { key: KEYS.other })).status).toBe(200);
          });
        } finally {
          await holder.close();
        }
        expect((await api('POST', '/v1/orders', { body: { currency: 'EUR', total: 100 } })).status).toBe(201);
        expect((await api('GET', '/v1/orders')).status).toBe(200);
      } finally {
        await t.stop();
      }
    }, 120_000);
  }
});

describe.skipIf(!realPostgres)('separate pools for the API and the workers (needs DATABASE_URL)', () => {
  it('answers requests while every connection of the workers waits on a lock', async () => {
    const t = await startTestServer({
      HOLDFAST_WORKER_POOL_SIZE: '1',
      HOLDFAST_PAYMENT_SETTLE_DELAY: '50ms',
    });
    try {
      const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
        call(t.url, method, path, options);
      const method = await api('POST', '/v1/payment-methods', {
        body: { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 } },
      });
      const [row] = await t.server.db.query<{ name: string }>('select current_schema() as name');
      const schema = row?.name ?? 'public';
      const payments = `${schema}.holdfast_payments`;
      // A pool of the test's own on the same schema (one connection holds the lock, one looks); the server's workers'
      // only connection then waits for it in the settlement round.
      const holder = await connect({
        databaseUrl: process.env.DATABASE_URL,
        max: 2,
        searchPath: schema,
      });
      try {
        const pay = await api('POST', '/v1/payments', {
          body: { amount: 200_000, currency: 'EUR', paymentMethod: method.body.id },
          headers: { 'idempotency-key': `pools-${randomBytes(4).toString('hex')}` },
        });
        expect(pay.status).toBe(202);
        await whileLocked(holder.sql, payments, async () => {
          await someoneWaits(holder.sql, payments);
          const [waiting] = await holder.sql<{ n: number }[]>`
            select count(*)::int as n from pg_stat_activity a join pg_locks l on l.pid = a.pid
            where l.relation = ${payments}::regclass and not l.granted and a.application_name = 'holdfast worker'`;
          expect(waiting?.n).toBe(1);
          expect((await api('POST', '/v1/orders', { body: { currency: 'EUR', total: 5 } })).status).toBe(201);
          expect((await api('GET', '/v1/orders')).status).toBe(200);
          expect((await api('GET', '/v1/webhook-endpoints')).status).toBe(200);
          expect((await api('GET', '/v1/events')).status).toBe(200);
        });
        // Released, the worker settles the payment.
        await eventually(async () => {
          const answer = await api('GET', `/v1/payments/${pay.body.id}`);
          return String(answer.body.status) === 'succeeded' ? true : undefined;
        });
      } finally {
        await holder.close();
      }
    } finally {
      await t.stop();
    }
  }, 120_000);

  it('settles payments while every connection of the API is taken', async () => {
    const t = await startTestServer({ HOLDFAST_API_POOL_SIZE: '1', HOLDFAST_PAYMENT_SETTLE_DELAY: '50ms' });
    try {
      const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
        call(t.url, method, path, options);
      const method = await api('POST', '/v1/payment-methods', {
        body: { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 } },
      });
      const pay = await api('POST', '/v1/payments', {
        body: { amount: 200_000, currency: 'EUR', paymentMethod: method.body.id },
        headers: { 'idempotency-key': `pools-${randomBytes(4).toString('hex')}` },
      });
      expect(pay.status).toBe(202);
      // The API's only connection, held: no request could run a statement now.
      const pool = t.server.pool;
      if (!pool) throw new Error('the server opened no pool');
      const held = await pool.connect();
      try {
        await eventually(async () => {
          const [row] = await t.server.workerDb.query<{ status: string }>(
            'select status from holdfast_payments where id = $1',
            [String(pay.body.id)],
          );
          return row?.status === 'succeeded' ? true : undefined;
        });
      } finally {
        held.release();
      }
      expect((await api('GET', `/v1/payments/${pay.body.id}`)).body.status).toBe('succeeded');
    } finally {
      await t.stop();
    }
  }, 120_000);
});

describe.skipIf(!realPostgres)('backends terminated under load (needs DATABASE_URL)', () => {
  let db: TestDatabase;
  let admin: Database;
  let server: Child | undefined;
  const application = `hf_faults_${randomBytes(4).toString('hex')}`;
  const key = KEYS.all;
  const other = KEYS.other;

  beforeAll(async () => {
    db = await createTestDatabase();
    admin = await connect({ databaseUrl: process.env.DATABASE_URL, max: 2, searchPath: db.schema });
    const url = new URL(childDatabaseUrl(db));
    // Every connection of this server, both pools, carries this name: the test terminates its
    // backends and nobody else's.
    url.searchParams.set('application_name', application);
    server = await startServerProcess({
      DATABASE_URL: url.toString(),
      HOLDFAST_SEED_DEMO_KEY: '0',
      HOLDFAST_LOG_LEVEL: 'silent',
      HOLDFAST_PAYMENT_SETTLE_DELAY: '50ms',
      HOLDFAST_RATE_LIMIT: '100000/1s',
      HOLDFAST_ADDRESS_RATE_LIMIT: '100000/1s',
      HOLDFAST_API_KEYS: JSON.stringify([
        { key, account: 'acct_faults_a', scopes: ['*'] },
        { key: other, account: 'acct_faults_b', scopes: ['*'] },
      ]),
    });
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await admin?.close();
    await db?.close();
  });

  it('stays up, answers every request 2xx or 503 with Retry-After, and works afterwards', async () => {
    const base = server?.url ?? '';
    const alive = () => server?.process.exitCode === null && server.process.signalCode === null;
    const payments = `${db.schema}.holdfast_payments`;
    const method = await call(base, 'POST', '/v1/payment-methods', {
      key,
      body: { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 } },
    });
    expect(method.status).toBe(201);

    const answers: { path: string; status: number; ok: boolean }[] = [];
    const failures: string[] = [];
    let flowing = true;
    const request = async (method: string, path: string, options: Parameters<typeof call>[3]) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const hung = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('no answer within 20 s')), 20_000);
      });
      try {
        const answer = await Promise.race([call(base, method, path, options), hung]);
        const ok = (answer.status >= 200 && answer.status < 300) || unavailable(answer);
        answers.push({ path, status: answer.status, ok });
        if (!ok) failures.push(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
      } catch (error) {
        // No answer at all: a reset connection, or none within the bound below.
        failures.push(`${method} ${path}: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        clearTimeout(timer);
      }
    };
    const client = async (n: number) => {
      for (let i = 0; flowing; i++) {
        await request('POST', '/v1/orders', { key, body: { currency: 'EUR', total: 100 + i } });
        await request('GET', '/v1/orders?limit=5', { key });
        await request('POST', '/v1/payments', {
          key,
          // Some settle at once, some are left to the settlement worker (above 100,000).
          body: { amount: i % 2 === 0 ? 500 : 150_000, currency: 'EUR', paymentMethod: method.body.id },
          headers: { 'idempotency-key': `faults-${n}-${i}` },
        });
        await request('GET', '/v1/payments?limit=5', { key: other });
      }
    };
    const terminate = (where: string) =>
      admin.sql<{ n: number }[]>`
        select count(*)::int as n from (
          select pg_terminate_backend(pid) from pg_stat_activity
          where application_name = ${application} and ${admin.sql.unsafe(where)}) killed`;

    const clients = [0, 1, 2, 3].map(client);
    let terminated = 0;
    try {
      for (let round = 0; round < 4; round++) {
        // The settlement worker (and any payment request) waiting on a lock, terminated.
        await whileLocked(admin.sql, payments, async () => {
          await someoneWaits(admin.sql, payments, `round ${round}: the settlement worker waiting`);
          const [row] = await terminate(
            `pid in (select pid from pg_locks where relation = '${payments}'::regclass and not granted)`,
          );
          terminated += row?.n ?? 0;
        });
        await new Promise((resolve) => setTimeout(resolve, 200));
        // Every backend of the server, API and workers, while requests flow.
        const [row] = await terminate('true');
        terminated += row?.n ?? 0;
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(alive()).toBe(true);
      }
    } finally {
      flowing = false;
      await Promise.all(clients);
    }
    expect(terminated).toBeGreaterThanOrEqual(8);
    expect(alive()).toBe(true);
    expect(failures).toEqual([]);
    expect(answers.filter((a) => a.status >= 200 && a.status < 300).length).toBeGreaterThan(0);

    // Afterwards everything works: writes, reads, readiness and the settlement worker.
    const order = await call(base, 'POST', '/v1/orders', { key, body: { currency: 'EUR', total: 1 } });
    expect(order.status).toBe(201);
    expect((await call(base, 'GET', `/v1/orders/${order.body.id}`, { key })).status).toBe(200);
    expect((await call(base, 'GET', '/readyz', { key: null })).status).toBe(200);
    await eventually(async () => {
      const [row] = await admin.sql<{ n: number }[]>`
        select count(*)::int as n from holdfast_payments where status = 'processing'`;
      return row?.n === 0 ? true : undefined;
    }, 30_000);
    expect(alive()).toBe(true);
  }, 180_000);
});
