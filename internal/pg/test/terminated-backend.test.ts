import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Database } from '../src/index';
import { createTestDatabase, realPostgres, type TestDatabase } from '../src/testing';

// porsager/postgres#1208: a backend terminated under a transaction made postgres.js write its
// `rollback` to a socket it had already dropped, from a setImmediate: an uncaught TypeError that
// ended the process. scripts/patch-postgres.mjs (postinstall) guards the driver; this shows the
// process survives, the transaction rejects as the connection error it is, and the pool recovers.
// Needs DATABASE_URL: PGlite has one session and no backend to terminate.
describe.skipIf(!realPostgres)('a terminated backend (needs DATABASE_URL)', () => {
  let db: TestDatabase;
  let killer: Database;
  const uncaught: unknown[] = [];
  const record = (error: unknown) => uncaught.push(error);
  beforeAll(async () => {
    // Recorded, not swallowed: the test fails on any of them.
    process.on('uncaughtException', record);
    db = await createTestDatabase({ max: 2 });
    killer = await connect({ databaseUrl: process.env.DATABASE_URL, max: 1 });
  });
  afterAll(async () => {
    process.off('uncaughtException', record);
    await killer?.close();
    await db?.close();
  });

  const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

  it('rejects the transaction with a connection error and never throws outside it', async () => {
    for (let round = 0; round < 5; round += 1) {
      let pid: number | undefined;
      let started: () => void = () => {};
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      const tx = db.sql.begin(async (t) => {
        const [row] = await t<{ pid: number }[]>`select pg_backend_pid() as pid`;
        pid = row?.pid;
        started();
        await t`select pg_sleep(5)`;
        // Application code that carries on after the error writes to the dead connection too.
        await t`select 1`;
      });
      const outcome = tx.then(
        () => 'committed',
        (error: unknown) => (error instanceof Error && 'code' in error ? String(error.code) : 'other'),
      );
      await running;
      await killer.sql`select pg_terminate_backend(${pid ?? 0})`;
      expect(await outcome).toBe('CONNECTION_CLOSED');
      await settle();
      expect(uncaught).toEqual([]);
      const [row] = await db.sql<{ one: number }[]>`select 1 as one`;
      expect(row?.one).toBe(1);
    }
  });

  it('rejects a plain query and lets the pool end without waiting for the dead session', async () => {
    const pool = await connect({ databaseUrl: process.env.DATABASE_URL, max: 1 });
    const [row] = await pool.sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
    const query = pool.sql`select pg_sleep(5)`.then(
      () => 'answered',
      (error: unknown) => (error instanceof Error && 'code' in error ? String(error.code) : 'other'),
    );
    await settle();
    await killer.sql`select pg_terminate_backend(${row?.pid ?? 0})`;
    expect(await query).toBe('CONNECTION_CLOSED');
    // Unguarded, end() waited for the rejected query's answer forever; with no timeout given
    // it must resolve by itself.
    await pool.sql.end();
    expect(uncaught).toEqual([]);
  });
});
