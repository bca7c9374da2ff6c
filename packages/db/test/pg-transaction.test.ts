import { realPostgres } from '@holdfast/pg/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgTransaction } from '../src/pg';

const url = process.env.DATABASE_URL ?? '';

describe.skipIf(!realPostgres)('pgTransaction on a terminated backend (needs DATABASE_URL)', () => {
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: url, max: 2 });
    // Idle clients are the pool's to hear; this test is about a checked-out one.
    pool.on('error', () => {});
  });
  afterAll(() => pool.end());

  it('rejects the transaction, sends nothing more, and the process goes on', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      const transaction = pgTransaction(pool);
      const outcome = transaction(async (client, db) => {
        const [row] = await db.query<{ pid: number }>('select pg_backend_pid() as pid');
        const ended = new Promise((resolve) => client.once('end', resolve));
        // Terminated while idle in the transaction: no statement of its is running to take the
        // error, so the client emits it as an event, the case that ended the process.
        await pool.query('select pg_terminate_backend($1)', [row?.pid]);
        await ended;
        await db.query('select 1');
      });
      await expect(outcome).rejects.toThrow();
      // The pool gave the dead client up and serves from a new connection.
      const [row] = (await pool.query<{ one: number }>('select 1 as one')).rows;
      expect(row?.one).toBe(1);
      expect(pool.totalCount).toBeLessThanOrEqual(2);
      expect(uncaught).toEqual([]);
    } finally {
      process.removeListener('uncaughtException', onUncaught);
    }
  });
});
