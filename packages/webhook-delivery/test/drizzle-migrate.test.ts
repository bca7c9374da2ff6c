import { fromDrizzle } from '@holdfast/db/drizzle';
import { migrate } from '@holdfast/db/migrate';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../src/index';
import { endPools, pgPool } from './fixtures/db';

// The migrations as a Drizzle service applies them: through `fromDrizzle`, which binds the
// numbered placeholders it finds in a statement's text, so a migration holding one (a function
// body's `execute ... using $1`) would fail there while every other driver applied it.

afterAll(endPools);

let db: TestDatabase;

describe.skipIf(!realPostgres)('migrations through Drizzle', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.close());

  it('applies every migration through fromDrizzle on node-postgres, each once', async () => {
    const hf = fromDrizzle(drizzle(pgPool(db)), sql);
    const all = migrations();
    expect(await migrate(hf, all)).toEqual(all.map((m) => m.id));
    expect(await migrate(hf, all)).toEqual([]);
    const [row] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from pg_proc p join pg_namespace s on s.oid = p.pronamespace
      where s.nspname = ${db.schema} and p.proname = 'holdfast_line_unfinished'`;
    expect(row?.n).toBe(1);
  });
});
