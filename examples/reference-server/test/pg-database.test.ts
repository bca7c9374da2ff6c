import { databaseFailure } from '@holdfast/db';
import { openPgDatabase, type PgDatabase } from '@holdfast/pg/node-postgres';
import { childDatabaseUrl, createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config';
import { openPgPools } from '../src/db';

// The server's node-postgres pools: on embedded PGlite and on PostgreSQL, statements and
// transactions through the `Db` boundary; on PostgreSQL, the API's timeouts reach every
// connection, and a backend terminated while idle or inside a transaction costs that
// transaction (a 503) and nothing else: the process stays, the pool goes on.

async function failure(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('on embedded PGlite', () => {
  it('one connection both pools use: statements and transactions, a transaction that throws rolled back', async () => {
    const pools = await openPgPools(loadConfig({ NODE_ENV: 'test', HOLDFAST_DATA_DIR: 'memory://' }));
    const database = pools.worker;
    try {
      expect(pools.api).toBe(pools.worker);
      expect(database.kind).toBe('pglite');
      await database.db.query('create table pgd_items (id text primary key)');
      await database.transaction(async (_, db) => {
        await db.query('insert into pgd_items (id) values ($1::text)', ['kept']);
      });
      const thrown = await failure(
        database.transaction(async (_, db) => {
          await db.query('insert into pgd_items (id) values ($1::text)', ['undone']);
          throw new Error('no');
        }),
      );
      expect(thrown).toMatchObject({ message: 'no' });
      // The same text twice: with no named statement left behind in PGlite's one session.
      for (let i = 0; i < 2; i += 1) {
        const rows = await database.db.query<{ id: string }>('select id from pgd_items order by id');
        expect(rows).toEqual([{ id: 'kept' }]);
      }
    } finally {
      await pools.close();
    }
  }, 120_000); // PGlite runs initdb first: seconds of CPU on a busy machine
});

describe('the pools of a server process', () => {
  it.skipIf(!realPostgres)("on PostgreSQL: the API's under its timeouts, the workers' without", async () => {
    const test = await createTestDatabase({ max: 1 });
    const config = loadConfig({
      NODE_ENV: 'test',
      DATABASE_URL: childDatabaseUrl(test),
      HOLDFAST_STATEMENT_TIMEOUT: '4s',
      HOLDFAST_LOCK_TIMEOUT: '1500ms',
    });
    const pools = await openPgPools(config);
    const settings = `select current_setting('statement_timeout') as statement,
      current_setting('lock_timeout') as lock, current_setting('application_name') as name`;
    try {
      expect(await pools.api?.db.query(settings)).toEqual([
        { statement: '4s', lock: '1500ms', name: 'holdfast api' },
      ]);
      expect(await pools.worker.db.query(settings)).toEqual([
        { statement: '0', lock: '0', name: 'holdfast worker' },
      ]);
    } finally {
      await pools.close();
      await test.close();
    }
  });
});

describe.skipIf(!realPostgres)('on PostgreSQL (needs DATABASE_URL)', () => {
  let test: TestDatabase;
  let database: PgDatabase;
  const idleErrors: Error[] = [];

  beforeAll(async () => {
    test = await createTestDatabase({ max: 2 });
    database = await openPgDatabase({
      databaseUrl: childDatabaseUrl(test),
      max: 2,
      applicationName: 'holdfast pgd test',
      timeouts: { statementMs: 1234, lockMs: 567 },
      onIdleError: (error) => idleErrors.push(error),
    });
  });
  afterAll(async () => {
    await database?.close();
    await test?.close();
  });

  it('sets the timeouts and the application name on every connection, and the schema of the URL', async () => {
    const [row] = await database.db.query<Record<string, string>>(
      `select current_setting('statement_timeout') as statement,
        current_setting('lock_timeout') as lock,
        current_setting('application_name') as name,
        current_schema() as schema`,
    );
    expect(row).toEqual({
      statement: '1234ms',
      lock: '567ms',
      name: 'holdfast pgd test',
      schema: test.schema,
    });
  });

  it('survives a backend terminated while idle and one terminated inside a transaction', async () => {
    // Idle: both connections of the pool are terminated between queries.
    const pids = await Promise.all(
      [0, 1].map(() =>
        database.transaction(
          async (_, db) => (await db.query<{ pid: number }>('select pg_backend_pid() as pid'))[0]?.pid,
        ),
      ),
    );
    expect(new Set(pids).size).toBe(2);
    await test.sql`select pg_terminate_backend(pid) from unnest(${pids as number[]}::int[]) as pid`;
    // Both errors, or the next query may still meet the second connection before the pool has
    // heard of its end (a 503 in the server, and a false failure here).
    await expect.poll(() => idleErrors.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(pids.length);
    for (const error of idleErrors) expect(databaseFailure(error)).toBe('unavailable');
    const [after] = await database.db.query<{ one: number }>('select 1 as one');
    expect(after).toEqual({ one: 1 });

    // Inside a transaction: its next statement fails as unavailable, the rollback too, and the
    // broken connection leaves the pool instead of serving the next transaction.
    const inside = await failure(
      database.transaction(async (_, db) => {
        const [row] = await db.query<{ pid: number }>('select pg_backend_pid() as pid');
        await test.sql`select pg_terminate_backend(${row?.pid ?? 0}::int)`;
        await db.query('select 1');
      }),
    );
    expect(inside).toBeInstanceOf(Error);
    expect(databaseFailure(inside)).toBe('unavailable');
    const answers = await Promise.all(
      [0, 1, 2, 3].map(() =>
        database.transaction(async (_, db) => (await db.query<{ one: number }>('select 1 as one'))[0]?.one),
      ),
    );
    expect(answers).toEqual([1, 1, 1, 1]);
  });
});
