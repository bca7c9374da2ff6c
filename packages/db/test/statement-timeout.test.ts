import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Db, withStatementTimeout } from '../src/index';
import { fromPostgres, postgresTransaction } from '../src/postgres';

// Statements run under their own statement timeout, never looser than the connection's: one
// still running past it is cancelled (57014), and the setting ends with the transaction. PGlite enforces
// no statement timeout, so what it can show is only that the setting is scoped.

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ max: 1 });
});
afterAll(() => db.close());

const timeoutOf = async (on: Db) => {
  const [row] = await on.query<{ ms: number }>(
    "select setting::int as ms from pg_settings where name = 'statement_timeout'",
  );
  return Number(row?.ms);
};
const LIMIT = 2000;
const transaction = () => postgresTransaction(db.sql);

describe('withStatementTimeout', () => {
  it('sets the timeout for the transaction only', async () => {
    const before = await timeoutOf(fromPostgres(db.sql));
    const inside = await withStatementTimeout(transaction(), LIMIT, (tx) => timeoutOf(tx));
    if (realPostgres) expect(inside).toBe(before === 0 ? LIMIT : Math.min(before, LIMIT));
    expect(await timeoutOf(fromPostgres(db.sql))).toBe(before);
  });

  it.skipIf(!realPostgres)('reads the connection timeout in whatever unit it was set', async () => {
    const before = await timeoutOf(fromPostgres(db.sql));
    try {
      for (const [set, ms] of [
        ['1500ms', 1500],
        ['3s', 2000],
        ['1min', 2000],
        ['0', 2000],
        ['1999', 1999],
      ] as const) {
        await db.sql`select set_config('statement_timeout', ${set}, false)`;
        expect(await withStatementTimeout(transaction(), 2000, (tx) => timeoutOf(tx)), set).toBe(ms);
      }
    } finally {
      await db.sql`select set_config('statement_timeout', ${String(before)}, false)`;
    }
  });

  it.skipIf(!realPostgres)('cancels a statement that runs past the timeout', async () => {
    const run = withStatementTimeout(transaction(), 50, (tx) => tx.query('select pg_sleep(2)'));
    await expect(run).rejects.toMatchObject({ code: '57014' });
    // The connection is usable again, under its own setting.
    expect(await db.sql`select 1 as one`).toEqual([{ one: 1 }]);
  });

  it.skipIf(!realPostgres)('keeps a tighter connection timeout', async () => {
    const before = await timeoutOf(fromPostgres(db.sql));
    await db.sql`set statement_timeout = 50`;
    try {
      const run = withStatementTimeout(transaction(), 60_000, (tx) => tx.query('select pg_sleep(2)'));
      await expect(run).rejects.toMatchObject({ code: '57014' });
    } finally {
      await db.sql`select set_config('statement_timeout', ${String(before)}, false)`;
    }
  });

  it('refuses a timeout that is not a positive integer, before any statement', async () => {
    for (const ms of [0, -1, 1.5, Number.NaN])
      await expect(withStatementTimeout(transaction(), ms, async () => 1)).rejects.toThrow(RangeError);
  });
});
