import type { Db } from '@holdfast/db';
import { fromPostgres, postgresTransaction } from '@holdfast/db/postgres';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIST_STATEMENT_TIMEOUT_MS, withListTimeout } from '../src/list-timeout';

// A list's statements run under their own statement timeout, never looser than the
// connection's: a list still running past it is cancelled (57014, answered 503 with
// Retry-After by the app), and the setting ends with the list's transaction. PGlite enforces
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
const database = () => ({ db: fromPostgres(db.sql), transaction: postgresTransaction(db.sql) });

describe('withListTimeout', () => {
  it('sets the list timeout for the list only', async () => {
    const before = await timeoutOf(fromPostgres(db.sql));
    const inside = await withListTimeout(database(), (tx) => timeoutOf(tx));
    if (realPostgres)
      expect(inside).toBe(
        before === 0 ? LIST_STATEMENT_TIMEOUT_MS : Math.min(before, LIST_STATEMENT_TIMEOUT_MS),
      );
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
        expect(await withListTimeout(database(), (tx) => timeoutOf(tx), 2000), set).toBe(ms);
      }
    } finally {
      await db.sql`select set_config('statement_timeout', ${String(before)}, false)`;
    }
  });

  it.skipIf(!realPostgres)('cancels a list statement that runs past the list timeout', async () => {
    const run = withListTimeout(database(), (tx) => tx.query('select pg_sleep(2)'), 50);
    await expect(run).rejects.toMatchObject({ code: '57014' });
    // The connection is usable again, under its own setting.
    expect(await db.sql`select 1 as one`).toEqual([{ one: 1 }]);
  });

  it.skipIf(!realPostgres)('keeps a tighter connection timeout', async () => {
    const before = await timeoutOf(fromPostgres(db.sql));
    await db.sql`set statement_timeout = 50`;
    try {
      const run = withListTimeout(database(), (tx) => tx.query('select pg_sleep(2)'), 60_000);
      await expect(run).rejects.toMatchObject({ code: '57014' });
    } finally {
      await db.sql`select set_config('statement_timeout', ${String(before)}, false)`;
    }
  });
});
