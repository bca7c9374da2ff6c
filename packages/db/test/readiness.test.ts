import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, migrationReadiness } from '../src/migrate';
import { fromPostgres } from '../src/postgres';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.close());

const list = [
  { id: '001_ready_a', sql: 'create table ready_a (id int)' },
  { id: '002_ready_b', sql: 'create table ready_b (id int)' },
];

describe('migrationReadiness', () => {
  it('is ready once every expected id is applied, and counts what is missing', async () => {
    const db = fromPostgres(database.sql);
    const options = { table: 'ready_migrations' };
    const ready = migrationReadiness(
      db,
      list.map((m) => m.id),
      options,
    );
    expect(await ready()).toBe('the database cannot be reached'); // no table of applied ids yet
    await migrate(db, list.slice(0, 1), options);
    expect(await ready()).toBe('1 migration(s) not applied');
    await migrate(db, list, options);
    expect(await ready()).toBeUndefined();
    // A database ahead of the process (an id it does not know) is still ready for it.
    expect(await migrationReadiness(db, ['001_ready_a'], options)()).toBeUndefined();
  });

  it.skipIf(!realPostgres)('gives up on a database that does not answer in time', async () => {
    const db = fromPostgres(database.sql);
    const options = { table: 'ready_locked', withinMs: 50 };
    await migrate(db, [{ id: '001_ready_a', sql: 'select 1' }], { table: 'ready_locked' });
    // Another session holds the table: the check's select waits behind the lock.
    let release: () => void = () => {};
    let locked: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const locking = database.sql.begin(async (tx) => {
      await tx`lock table ready_locked in access exclusive mode`;
      locked();
      await held;
    });
    try {
      await isLocked;
      expect(await migrationReadiness(db, ['001_ready_a'], options)()).toBe(
        'the database did not answer in time',
      );
    } finally {
      release();
      await locking;
    }
  });

  it('refuses a table or schema that is no identifier, before any statement', () => {
    const db = fromPostgres(database.sql);
    expect(() => migrationReadiness(db, [], { table: 'x; drop table y' })).toThrow(TypeError);
    expect(() => migrationReadiness(db, [], { schema: 'Public' })).toThrow(TypeError);
  });
});
