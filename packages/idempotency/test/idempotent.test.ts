import { randomBytes } from 'node:crypto';
import type { Db, Transaction } from '@holdfast/db';
import { migrate } from '@holdfast/db/migrate';
import { fromPg, pgTransaction } from '@holdfast/db/pg';
import { fromPostgres, postgresTransaction } from '@holdfast/db/postgres';
import { childDatabaseUrl, createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { problem } from '@holdfast/problem-details';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type HandlerResult,
  type IdempotentRequest,
  idempotent,
  MIN_RETENTION_MS,
  migrations,
  schedulePurge,
} from '../src/index';
import { testApp } from './fixtures/app';
import { deferred, freshKey, holding, manualClock, problemOf } from './helpers';

let db: TestDatabase;
let pool: pg.Pool | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
  if (realPostgres) pool = new pg.Pool({ connectionString: childDatabaseUrl(db), max: 25 });
  await migrate(fromPostgres(db.sql), migrations());
  await db.sql`create table payments (id serial primary key, key text not null, amount int not null)`;
  await db.sql`create table outbox (key text not null, type text not null)`;
});
afterAll(async () => {
  await pool?.end();
  await db?.close();
});

const request = (key: string | null, amount = 500): IdempotentRequest => ({
  key,
  account: 'acct_1',
  method: 'POST',
  path: '/v1/payments',
  body: { amount, currency: 'EUR' },
  required: key !== null,
});

async function count(table: 'payments' | 'outbox', key: string): Promise<number> {
  const [row] = await db.sql<
    { n: number }[]
  >`select count(*)::int as n from ${db.sql(table)} where key = ${key}`;
  return row?.n ?? 0;
}

async function keyRows(key: string): Promise<number> {
  const [row] = await db.sql<{ n: number }[]>`
    select count(*)::int as n from holdfast_idempotency_keys where key = ${key}`;
  return row?.n ?? 0;
}

/**
 * A transaction of each driver and a write through its own client: what a handler does with
 * `tx`. The outbox row goes through `db` (the same transaction as a Db).
 */
interface Driver {
  readonly transaction: () => Transaction<unknown>;
  readonly write: (tx: unknown, db: Db, key: string, amount: number) => Promise<void>;
}

const outbox = (db: Db, key: string) =>
  db.query('insert into outbox (key, type) values ($1::text, $2::text)', [key, 'payment.created']);

const drivers: [string, Driver][] = [
  [
    'postgres.js',
    {
      transaction: () => postgresTransaction(db.sql) as Transaction<unknown>,
      async write(tx, db, key, amount) {
        const sql = tx as import('postgres').TransactionSql;
        await sql`insert into payments (key, amount) values (${key}, ${amount})`;
        await outbox(db, key);
      },
    },
  ],
  ...(realPostgres
    ? ([
        [
          'node-postgres',
          {
            transaction: () => {
              if (pool === undefined) throw new Error('no pool');
              return pgTransaction(pool) as Transaction<unknown>;
            },
            async write(tx, db, key, amount) {
              await (tx as pg.PoolClient).query('insert into payments (key, amount) values ($1, $2)', [
                key,
                amount,
              ]);
              await outbox(db, key);
            },
          },
        ],
      ] as [string, Driver][])
    : []),
];

describe.each(drivers)(
  'idempotent() on %s: claim, business write and answer in one transaction',
  (_name, driver) => {
    const pay = (
      key: string | null,
      result: (amount: number) => HandlerResult | Promise<HandlerResult>,
      amount = 500,
    ) =>
      idempotent(driver.transaction(), request(key, amount), async (tx, tdb) => {
        await driver.write(tx, tdb, key ?? 'none', amount);
        return result(amount);
      });
    const created = (amount: number): HandlerResult => ({
      status: 201,
      headers: { Location: `/v1/payments/${amount}`, 'Set-Cookie': 'session=secret' },
      body: { amount },
    });

    it('commits the write, the outbox row and the answer together, then replays without running', async () => {
      const key = freshKey();
      const first = await pay(key, created);
      expect(first.status).toBe(201);
      expect(first.headers.get('Idempotent-Replayed')).toBeNull();
      expect([await count('payments', key), await count('outbox', key), await keyRows(key)]).toEqual([
        1, 1, 1,
      ]);
      let ran = false;
      const again = await idempotent(driver.transaction(), request(key), async () => {
        ran = true;
        return { status: 201 };
      });
      expect(ran).toBe(false);
      expect(again.headers.get('Idempotent-Replayed')).toBe('true');
      expect(again.headers.get('Location')).toBe('/v1/payments/500');
      expect(again.headers.get('Set-Cookie')).toBeNull();
      expect(await again.json()).toEqual({ amount: 500 });
      const reused = await problemOf(pay(key, created, 7));
      expect([reused.status, reused.code]).toEqual([422, 'idempotency_key_reused']);
      expect(await count('payments', key)).toBe(1);
    });

    it('rolls a 5xx answer back with its writes: returned, nothing stored, the retry runs', async () => {
      const key = freshKey();
      const failed = await pay(key, () => ({ status: 503, body: { retry: true } }));
      expect(failed.status).toBe(503);
      expect([await count('payments', key), await count('outbox', key), await keyRows(key)]).toEqual([
        0, 0, 0,
      ]);
      expect((await pay(key, created)).headers.get('Idempotent-Replayed')).toBeNull();
      expect(await count('payments', key)).toBe(1);
    });

    it('rolls a throw back, a thrown 4xx problem too: rethrown, nothing stored, the retry runs', async () => {
      const key = freshKey();
      await expect(
        pay(key, () => {
          throw new Error('crash after the write');
        }),
      ).rejects.toThrow('crash after the write');
      const refused = await problemOf(
        pay(key, () => {
          throw problem('unprocessable', { detail: 'no' });
        }),
      );
      expect(refused.status).toBe(422);
      expect([await count('payments', key), await keyRows(key)]).toEqual([0, 0]);
      expect((await pay(key, created)).status).toBe(201);
      expect(await count('payments', key)).toBe(1);
    });

    it('commits a returned 4xx with its writes and replays it', async () => {
      const key = freshKey();
      const declined = await pay(key, () => ({ status: 402, body: { declined: true } }));
      expect(declined.status).toBe(402);
      const replay = await pay(key, created);
      expect([replay.status, replay.headers.get('Idempotent-Replayed')]).toEqual([402, 'true']);
      expect(await count('payments', key)).toBe(1);
    });

    it('answers 400 before the transaction begins when the required key is missing or malformed', async () => {
      let ran = false;
      const never: Transaction<unknown> = async () => {
        ran = true;
        throw new Error('no transaction should begin');
      };
      const missing = await problemOf(
        idempotent(never, { ...request(null), required: true }, () => ({ status: 201 })),
      );
      expect(missing.code).toBe('idempotency_key_required');
      const malformed = await problemOf(idempotent(never, request('x'.repeat(300)), () => ({ status: 201 })));
      expect(malformed.code).toBe('validation_failed');
      expect(ran).toBe(false);
    });

    it('runs a keyless optional request in its transaction, rolling back a 5xx', async () => {
      const before = await count('payments', 'none');
      expect((await pay(null, () => ({ status: 500 }))).status).toBe(500);
      expect(await count('payments', 'none')).toBe(before);
      expect((await pay(null, created)).status).toBe(201);
      expect(await count('payments', 'none')).toBe(before + 1);
    });

    it('runs again once the stored answer is past its retention', async () => {
      const key = freshKey();
      const clock = manualClock();
      const run = () =>
        idempotent(
          driver.transaction(),
          request(key),
          async (tx, tdb) => {
            await driver.write(tx, tdb, key, 1);
            return { status: 201 };
          },
          { now: clock.now },
        );
      await run();
      clock.advance(MIN_RETENTION_MS - 1);
      expect((await run()).headers.get('Idempotent-Replayed')).toBe('true');
      clock.advance(1);
      expect((await run()).headers.get('Idempotent-Replayed')).toBeNull();
      expect([await count('payments', key), await keyRows(key)]).toEqual([2, 1]);
    });

    // Needs several connections: PGlite's one is held by the first request's transaction.
    it.skipIf(!realPostgres)(
      '20 concurrent requests with one key: one run, one row; the others 409 while it runs, then the replay',
      async () => {
        const key = freshKey();
        let runs = 0;
        // The one that runs holds the key until another has been refused: however slowly the
        // others' connections open, they arrive while it runs (a request that waited would hang).
        const refused = deferred();
        const run = () =>
          idempotent(driver.transaction(), request(key), async (tx, tdb) => {
            runs += 1;
            await refused.promise;
            await driver.write(tx, tdb, key, 500);
            return { status: 201, body: { runs } };
          });
        const settled = await Promise.allSettled(
          Array.from({ length: 20 }, () =>
            run().catch((error: unknown) => {
              refused.resolve();
              throw error;
            }),
          ),
        );
        expect(runs).toBe(1);
        const answered = settled.flatMap((one) => (one.status === 'fulfilled' ? [one.value] : []));
        expect(answered.filter((answer) => answer.headers.get('Idempotent-Replayed') === null)).toHaveLength(
          1,
        );
        for (const one of settled) {
          if (one.status === 'fulfilled') expect(one.value.status).toBe(201);
          else expect(one.reason).toMatchObject({ status: 409, code: 'idempotency_key_in_use' });
        }
        expect(settled.some((one) => one.status === 'rejected')).toBe(true);
        const replay = await run();
        expect([replay.status, replay.headers.get('Idempotent-Replayed')]).toEqual([201, 'true']);
        expect([await count('payments', key), await count('outbox', key)]).toEqual([1, 1]);
      },
    );

    it.skipIf(!realPostgres)(
      'while the first runs: 422 for another request (checked first), 409 with Retry-After for the same; after its rollback the retry claims the key',
      async () => {
        const key = freshKey();
        const first = await holding((inside) =>
          idempotent(driver.transaction(), request(key), async (tx, tdb) => {
            await driver.write(tx, tdb, key, 1);
            await inside();
            return { status: 503 };
          }),
        );
        const changed = await problemOf(pay(key, created, 9));
        expect([changed.status, changed.code]).toEqual([422, 'idempotency_key_reused']);
        const busy = await problemOf(pay(key, created));
        expect([busy.status, busy.code]).toEqual([409, 'idempotency_key_in_use']);
        expect(busy.toResponse().headers.get('Retry-After')).toBe('1');
        first.release();
        expect((await first.result).status).toBe(503);
        const answer = await pay(key, created);
        expect([answer.status, answer.headers.get('Idempotent-Replayed')]).toEqual([201, null]);
        expect(await count('payments', key)).toBe(1);
      },
    );
  },
);

describe('the table and its schema', () => {
  it('ships one plain SQL migration; with a schema, the table and every statement go there', async () => {
    expect(migrations().map((migration) => migration.id)).toEqual(['@holdfast/idempotency/001_keys']);
    const schema = `idem_${randomBytes(4).toString('hex')}`;
    try {
      await migrate(fromPostgres(db.sql), migrations({ schema }));
      const key = freshKey();
      const options = { schema };
      const answer = await idempotent(
        postgresTransaction(db.sql),
        request(key),
        async () => ({ status: 201 }),
        options,
      );
      expect(answer.status).toBe(201);
      const replay = await idempotent(
        postgresTransaction(db.sql),
        request(key),
        async () => ({ status: 500 }),
        options,
      );
      expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
      const [row] = await db.sql<{ n: number }[]>`
        select count(*)::int as n from ${db.sql(schema)}.holdfast_idempotency_keys where key = ${key}`;
      expect(row?.n).toBe(1);
      expect(await keyRows(key)).toBe(0);
    } finally {
      await db.sql.unsafe(`drop schema if exists ${schema} cascade`);
    }
  });

  it('is a normal logged table keyed by (account, key), with the purge index', async () => {
    const [table] = await db.sql<{ relpersistence: string }[]>`
      select relpersistence from pg_class where relname = 'holdfast_idempotency_keys' and relkind = 'r'
        and relnamespace = current_schema()::regnamespace`;
    expect(table?.relpersistence).toBe('p');
    const indexes = await db.sql<{ indexdef: string }[]>`
      select indexdef from pg_indexes where tablename = 'holdfast_idempotency_keys' and schemaname = current_schema()`;
    expect(indexes.map((index) => index.indexdef).join('\n')).toMatch(
      /\(account, key\)[\s\S]*\(expires_at\)|\(expires_at\)[\s\S]*\(account, key\)/,
    );
  });
});

describe('schedulePurge', () => {
  it('deletes expired answers in batches on its schedule, and stop() waits for a purge in progress', async () => {
    const clock = manualClock();
    const keys = Array.from({ length: 5 }, () => freshKey());
    for (const key of keys)
      await idempotent(postgresTransaction(db.sql), request(key), async () => ({ status: 201 }), {
        now: clock.now,
      });
    const purger = schedulePurge(fromPostgres(db.sql), {
      intervalMs: 10,
      batchSize: 2,
      now: () => clock.now() + MIN_RETENTION_MS,
    });
    for (let i = 0; i < 200 && (await Promise.all(keys.map(keyRows))).some((n) => n > 0); i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await purger.stop();
    expect(await Promise.all(keys.map(keyRows))).toEqual(keys.map(() => 0));
  });

  it('keeps answers still in their retention, and reports a failing purge', async () => {
    const key = freshKey();
    await idempotent(postgresTransaction(db.sql), request(key), async () => ({ status: 201 }));
    const errors: unknown[] = [];
    const broken: Db = {
      query: async () => {
        throw new Error('database away');
      },
    };
    const failing = schedulePurge(broken, { intervalMs: 5, onError: (error) => errors.push(error) });
    const fine = schedulePurge(fromPostgres(db.sql), { intervalMs: 5 });
    await new Promise((resolve) => setTimeout(resolve, 60));
    await Promise.all([failing.stop(), fine.stop()]);
    expect(errors.length).toBeGreaterThan(0);
    expect(await keyRows(key)).toBe(1);
    expect(() => schedulePurge(broken, { batchSize: 0 })).toThrow(RangeError);
  });

  it.skipIf(!realPostgres)('skips a row a request holds locked instead of waiting for it', async () => {
    if (pool === undefined) throw new Error('no pool');
    const clock = manualClock();
    const locked = freshKey();
    const free = freshKey();
    for (const key of [locked, free])
      await idempotent(postgresTransaction(db.sql), request(key), async () => ({ status: 201 }), {
        now: clock.now,
      });
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query('select 1 from holdfast_idempotency_keys where key = $1 for update', [locked]);
      const purger = schedulePurge(fromPg(pool), {
        intervalMs: 5,
        now: () => clock.now() + MIN_RETENTION_MS,
      });
      for (let i = 0; i < 200 && (await keyRows(free)) > 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      await purger.stop();
      expect([await keyRows(locked), await keyRows(free)]).toEqual([1, 0]);
    } finally {
      await client.query('rollback');
      client.release();
    }
  });
});

describe('property: random sequences of repeats, changed bodies and failures', () => {
  type Outcome = 'created' | 'returned4xx' | 'thrown4xx' | 'returned5xx' | 'crash';
  const step = fc.record({
    key: fc.nat(2),
    body: fc.nat(1),
    outcome: fc.constantFrom<Outcome>('created', 'returned4xx', 'thrown4xx', 'returned5xx', 'crash'),
  });

  it('committed business rows are exactly the stored answers, and each key answers as its first stored answer', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        const prefix = randomBytes(6).toString('hex');
        // The model: a key holds the body and answer of its first stored (2xx, returned 4xx) run.
        const stored = new Map<number, { body: number; status: number; execution: number }>();
        let executions = 0;
        for (const { key, body, outcome } of steps) {
          const name = `${prefix}-${key}`;
          const held = stored.get(key);
          const run = idempotent(postgresTransaction(db.sql), request(name, body), async (tx) => {
            executions += 1;
            const execution = executions;
            await tx`insert into payments (key, amount) values (${name}, ${execution})`;
            switch (outcome) {
              case 'created':
                return { status: 201, body: { execution } };
              case 'returned4xx':
                return { status: 404, body: { execution } };
              case 'thrown4xx':
                throw problem('unprocessable', { detail: 'refused' });
              case 'returned5xx':
                return { status: 503, body: { execution } };
              case 'crash':
                throw new Error('crash');
            }
          });
          if (held !== undefined && held.body !== body) {
            expect((await problemOf(run)).code).toBe('idempotency_key_reused');
          } else if (held !== undefined) {
            const replay = await run;
            expect([replay.status, replay.headers.get('Idempotent-Replayed')]).toEqual([held.status, 'true']);
            expect(await replay.json()).toEqual({ execution: held.execution });
          } else if (outcome === 'crash' || outcome === 'thrown4xx') {
            await expect(run).rejects.toThrow();
          } else {
            const answer = await run;
            if (outcome !== 'returned5xx')
              stored.set(key, { body, status: answer.status, execution: executions });
          }
        }
        const rows = await db.sql<{ amount: number }[]>`
          select amount from payments where key like ${`${prefix}-%`} order by amount`;
        expect(rows.map((row) => row.amount)).toEqual(
          [...stored.values()].map((s) => s.execution).sort((a, b) => a - b),
        );
      }),
      { numRuns: 40 },
    );
  });
});

describe('withIdempotency(): a Hono route', () => {
  const pay = (app: ReturnType<typeof testApp>, key: string | undefined, amount = 500) =>
    app.request('/v1/payments', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        ...(key === undefined ? {} : { 'Idempotency-Key': key }),
      },
      body: JSON.stringify({ currency: 'EUR', amount }),
    });

  it('requires the key, runs once, replays with a new Request-Id and without Set-Cookie', async () => {
    const app = testApp(db.sql);
    const missing = await pay(app, undefined);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({
      code: 'idempotency_key_required',
      requestId: missing.headers.get('Request-Id'),
    });
    const key = freshKey();
    const first = await pay(app, key);
    expect(first.status).toBe(201);
    expect(first.headers.get('Set-Cookie')).toBe('x=1');
    const again = await pay(app, `"${key}"`);
    expect(again.status).toBe(201);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.headers.get('Set-Cookie')).toBeNull();
    expect(again.headers.get('Location')).toBe(first.headers.get('Location'));
    expect(again.headers.get('Request-Id')).not.toBe(first.headers.get('Request-Id'));
    expect(await again.json()).toEqual(await first.json());
    const reused = await pay(app, key, 1);
    expect(reused.status).toBe(422);
    expect(await reused.json()).toMatchObject({
      code: 'idempotency_key_reused',
      requestId: reused.headers.get('Request-Id'),
    });
    expect(await count('payments', key)).toBe(1);
  });
});
