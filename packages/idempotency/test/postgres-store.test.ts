import { migrate } from '@holdfast/db/migrate';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IdempotencyStore } from '../src/index';
import { migrations, postgresIdempotencyStore } from '../src/postgres';
import { deferred, storeBehaviour } from './store-suite';

let db: TestDatabase;
let store: IdempotencyStore;

beforeAll(async () => {
  db = await createTestDatabase();
  await migrate(fromPostgres(db.sql), migrations);
  expect(await migrate(fromPostgres(db.sql), migrations)).toEqual([]); // recorded, never applied twice
  store = postgresIdempotencyStore(db.sql);
});
afterAll(() => db?.close());

storeBehaviour(
  `PostgresIdempotencyStore (${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'})`,
  () => store,
);

describe('the PostgreSQL table', () => {
  it('is a normal logged table keyed by (account, key), with the purge index', async () => {
    const [table] = await db.sql<{ relpersistence: string }[]>`
      select relpersistence from pg_class where oid = 'holdfast_idempotency_keys'::regclass`;
    expect(table?.relpersistence).toBe('p');
    const indexes = await db.sql<{ indexdef: string }[]>`
      select indexdef from pg_indexes where tablename = 'holdfast_idempotency_keys' and schemaname = current_schema()`;
    expect(indexes.map((index) => index.indexdef).join('\n')).toMatch(
      /\(account, key\)[\s\S]*\(expires_at\)|\(expires_at\)[\s\S]*\(account, key\)/,
    );
  });
});

describe.skipIf(!realPostgres)('purge beside requests (needs DATABASE_URL: several connections)', () => {
  it('skips a row a request holds locked instead of waiting for it, and deletes the rest in batches', async () => {
    const other = await db.connectAgain(2);
    try {
      const past = new Date('2020-01-01T00:00:00.000Z');
      for (let i = 0; i < 7; i++) {
        await db.sql`
          insert into holdfast_idempotency_keys (account, key, fingerprint, token, locked_until, created_at, expires_at)
          values ('acct_purge', ${`old-${i}`}, 'f', 't', ${past}, ${past}, ${past})`;
      }
      const locked = deferred();
      const release = deferred();
      let holderPid = 0;
      const holder = other.sql.begin(async (tx) => {
        const [me] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
        holderPid = me?.pid ?? 0;
        await tx`select 1 from holdfast_idempotency_keys where account = 'acct_purge' and key = 'old-0' for update`;
        locked.resolve();
        await release.promise;
      });
      try {
        await locked.promise;
        // The holder lets go only after the purge: a purge that waited for its row would wait
        // forever. Told apart by what PostgreSQL reports, not by time: while the purge runs, any
        // backend blocked by the holder's lock is a purge waiting for it.
        let purging = true;
        const purge = store.purge({ now: new Date('2020-01-02T00:00:00.000Z'), batchSize: 2 }).finally(() => {
          purging = false;
        });
        const blocked = (async () => {
          while (purging) {
            const [row] = await other.sql<{ n: number }[]>`
              select count(*)::int as n from pg_stat_activity where ${holderPid}::int = any(pg_blocking_pids(pid))`;
            if ((row?.n ?? 0) > 0) return 'blocked by the held row';
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
          return 'never blocked';
        })();
        const first = await Promise.race([purge.then((purged) => ({ purged })), blocked]);
        expect(first).toEqual({ purged: 6 });
        expect(await blocked).toBe('never blocked');
      } finally {
        release.resolve();
        await holder;
      }
      expect(await store.purge({ now: new Date('2020-01-02T00:00:00.000Z'), batchSize: 2 })).toBe(1);
    } finally {
      await other.close();
    }
  });
});
