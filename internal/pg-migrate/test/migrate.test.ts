import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMigrations } from '../src/files';
import { migrate } from '../src/index';

const three = [
  { id: '001_a', sql: 'create table pgm_a (id int primary key)' },
  { id: '002_b', sql: 'create table pgm_b (id int primary key)' },
  { id: '003_c', sql: 'insert into pgm_a values (1)' },
];

// One database for the file (booting PGlite is the slow part); each test keeps its own table of
// applied ids and its own objects, so they never see each other's.
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ max: 1 });
});
afterAll(() => db?.close());

describe('migrate', () => {
  it.skipIf(!realPostgres)(
    'two runners at once both succeed and apply each migration once (needs DATABASE_URL: several connections)',
    async () => {
      const db = await createTestDatabase({ max: 1 });
      const other = await db.connectAgain(1);
      try {
        // A slow first migration widens the window in which an unlocked runner would race.
        const slow = [{ id: '000_slow', sql: 'select pg_sleep(0.3)' }, ...three];
        const [a, b] = await Promise.all([migrate(db.sql, slow), migrate(other.sql, slow)]);
        expect([...a, ...b].sort()).toEqual(slow.map((m) => m.id).sort());
        const rows = await db.sql<{ id: string }[]>`select id from holdfast_migrations order by id`;
        expect(rows.map((r) => r.id)).toEqual(slow.map((m) => m.id).sort());
        const [count] = await db.sql<{ n: number }[]>`select count(*)::int as n from pgm_a`;
        expect(count?.n).toBe(1);
      } finally {
        await other.close();
        await db.close();
      }
    },
  );

  it('applies in list order, records each id, and never applies a recorded id again', async () => {
    const table = 'm_order';
    expect(await migrate(db.sql, three.slice(0, 2), { table })).toEqual(['001_a', '002_b']);
    expect(await migrate(db.sql, three, { table })).toEqual(['003_c']);
    // Had 003_c run twice, the primary key would refuse the second row.
    expect(await migrate(db.sql, three, { table })).toEqual([]);
    const [count] = await db.sql<{ n: number }[]>`select count(*)::int as n from pgm_a`;
    expect(count?.n).toBe(1);
    // A recorded id whose SQL changed since is refused, not applied again.
    await expect(migrate(db.sql, [{ id: '001_a', sql: 'select 1 / 0' }], { table })).rejects.toThrow(
      /001_a changed since/,
    );
  });

  it('a failing migration leaves nothing of itself; those before it stay applied', async () => {
    const table = 'm_rollback';
    const broken = [
      { id: '001_table', sql: 'create table holdfast_rollback_probe (id int)' },
      { id: '002_broken', sql: 'create table holdfast_rollback_half (id int); select * from no_such_table' },
    ];
    await expect(migrate(db.sql, broken, { table })).rejects.toThrow();
    const [probe] = await db.sql`select to_regclass('holdfast_rollback_probe') as name`;
    expect(probe?.name).toBe('holdfast_rollback_probe');
    const [half] = await db.sql`select to_regclass('holdfast_rollback_half') as name`;
    expect(half?.name).toBeNull();
    const recorded = await db.sql.unsafe(`select id from ${table}`);
    expect(recorded.map((row) => row.id)).toEqual(['001_table']);
    expect(await migrate(db.sql, broken.slice(0, 1), { table })).toEqual([]);
  });

  it('refuses duplicate and empty ids before touching the database', async () => {
    const table = 'm_refused';
    const twice = [
      { id: '001_x', sql: 'create table pgm_x ()' },
      { id: '001_x', sql: 'select 1' },
    ];
    await expect(migrate(db.sql, twice, { table })).rejects.toThrow(TypeError);
    await expect(migrate(db.sql, [{ id: '', sql: 'select 1' }], { table })).rejects.toThrow(TypeError);
    const [before] = await db.sql`select to_regclass(${table}) as name`;
    expect(before?.name).toBeNull();
    const [x] = await db.sql`select to_regclass('pgm_x') as name`;
    expect(x?.name).toBeNull();
  });

  it('uses holdfast_migrations unless told otherwise', async () => {
    expect(await migrate(db.sql, [{ id: '001_default', sql: 'create table pgm_default ()' }])).toEqual([
      '001_default',
    ]);
    const rows = await db.sql<{ id: string }[]>`select id from holdfast_migrations`;
    expect(rows.map((r) => r.id)).toContain('001_default');
  });
});

describe('readMigrations', () => {
  it('reads the versioned files of a directory in name order, ids without .sql', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pgm-'));
    try {
      await writeFile(join(dir, '100_orders.sql'), 'create table orders ();');
      await writeFile(join(dir, '001_accounts.sql'), 'create table accounts ();');
      await writeFile(join(dir, 'notes.txt'), 'not a migration');
      expect(await readMigrations(dir)).toEqual([
        { id: '001_accounts', sql: 'create table accounts ();' },
        { id: '100_orders', sql: 'create table orders ();' },
      ]);
    } finally {
      await rm(dir, { recursive: true });
    }
  });
});
