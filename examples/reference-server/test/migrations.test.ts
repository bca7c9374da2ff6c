import { createTestDatabase, realPostgres } from '@holdfast/pg/testing';
import { expect, it } from 'vitest';
import { migrate, migrationFiles } from '../src/db';

// Issue 8: migrations run at start under a PostgreSQL advisory lock in one transaction, so two
// instances starting together do not race: both finish, each migration is applied once.

it.skipIf(!realPostgres)(
  'two instances migrating at once both succeed and apply each migration once (needs DATABASE_URL: several connections)',
  async () => {
    const db = await createTestDatabase({ max: 1 });
    const other = await db.connectAgain(1);
    try {
      const files = await migrationFiles();
      // A slow first migration widens the window in which an unlocked runner would race.
      const slow = [{ id: '000_slow', sql: 'select pg_sleep(0.3)' }, ...files];
      const [a, b] = await Promise.all([migrate(db.sql, [], slow), migrate(other.sql, [], slow)]);
      expect([...(a ?? []), ...(b ?? [])].sort()).toEqual(slow.map((m) => m.id).sort());
      const rows = await db.sql<{ id: string }[]>`select id from holdfast_migrations order by id`;
      expect(rows.map((r) => r.id)).toEqual(slow.map((m) => m.id).sort());
      expect(await migrate(db.sql, [], slow)).toEqual([]);
    } finally {
      await other.close();
      await db.close();
    }
  },
);

it('a failing migration rolls back whole and is not recorded', async () => {
  const db = await createTestDatabase({ max: 1 });
  try {
    const broken = [
      { id: '001_table', sql: 'create table holdfast_rollback_probe (id int)' },
      { id: '002_broken', sql: 'select * from no_such_table' },
    ];
    await expect(migrate(db.sql, [], broken)).rejects.toThrow();
    const [probe] = await db.sql`select to_regclass('holdfast_rollback_probe') as name`;
    expect(probe?.name).toBeNull();
  } finally {
    await db.close();
  }
});
