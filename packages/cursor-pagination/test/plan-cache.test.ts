import type { Db } from '@holdfast/db';
import { fromPg } from '@holdfast/db/pg';
import { fromPostgres } from '@holdfast/db/postgres';
import {
  childDatabaseUrl,
  createTestDatabase,
  type Database,
  realPostgres,
  type TestDatabase,
} from '@holdfast/pg/testing';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paginate } from '../src/index';
import { keyring } from './fixtures';

// A list over a table of many partitions is planned over every partition and its indexes, which
// costs several times the execution. PostgreSQL keeps one plan of a prepared statement for later
// calls only when that plan's estimated cost is no worse than the fresh ones'; a page's
// `limit $n` made the kept plan's estimate a tenth of the matching rows, so every call was
// planned again. Both drivers prepare named statements (`@holdfast/db`), so the statement's
// counts in `pg_prepared_statements` show what a connection did.
const sort = defineSortAllowlist({
  fields: { createdAt: { column: 'created_at', type: 'timestamp' } },
  id: { column: 'id' },
  default: '-createdAt',
});
const ENDPOINTS = 40;
const CALLS = 12;

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql.unsafe(`
    create table history (
      id text not null, account_id text not null, endpoint_id text not null,
      created_at timestamptz(3) not null, primary key (id, created_at)
    ) partition by range (created_at)`);
  for (let month = 1; month <= 12; month += 1) {
    const from = `2026-${String(month).padStart(2, '0')}-01`;
    const to = month === 12 ? '2027-01-01' : `2026-${String(month + 1).padStart(2, '0')}-01`;
    await db.sql.unsafe(
      `create table history_${month} partition of history for values from ('${from}') to ('${to}')`,
    );
  }
  await db.sql.unsafe(`
    create index history_list on history (account_id, endpoint_id, created_at desc nulls last, id desc nulls last)`);
  await db.sql.unsafe(`
    insert into history (id, account_id, endpoint_id, created_at)
    select 'h_' || lpad(n::text, 6, '0'), 'acct_a', 'ep_' || (n % ${ENDPOINTS}),
           timestamptz '2026-01-01' + (n * interval '9 minutes')
    from generate_series(1, 50000) n`);
  await db.sql.unsafe('analyze history');
}, 60_000);
afterAll(async () => {
  await db.close();
});

/** One page of an endpoint's history, newest first. */
function listHistory(on: Db, endpoint: string, limit: number, cursor?: string | null) {
  return paginate(on, {
    from: 'history',
    where: { text: 'account_id = $1', values: ['acct_a'] },
    allowlist: sort,
    filterColumns: { endpoint: 'endpoint_id' },
    filter: { endpoint },
    limit: String(limit),
    cursor,
    binding: { account: 'acct_a', resource: 'history' },
    keyring,
  });
}

/** Lists first pages of several endpoints on one connection; answers the statement's plan counts. */
async function planCounts(
  connection: Database | pg.Client,
): Promise<{ generic: number; custom: number; pages: number }> {
  const on = connection instanceof pg.Client ? fromPg(connection) : fromPostgres(connection.sql);
  let pages = 0;
  for (let call = 0; call < CALLS; call += 1) {
    const endpoint = `ep_${(call * 7) % ENDPOINTS}`;
    const page = await listHistory(on, endpoint, 20);
    expect(page.data).toHaveLength(20);
    expect(page.data.every((row) => row.endpoint_id === endpoint)).toBe(true);
    pages += 1;
  }
  const [counts] = await on.query<{ generic: number; custom: number }>(
    `select coalesce(sum(generic_plans), 0)::int as generic, coalesce(sum(custom_plans), 0)::int as custom
     from pg_prepared_statements
     where statement like '%from history where%' and statement not like '%pg_prepared_statements%'`,
  );
  return { generic: counts?.generic ?? 0, custom: counts?.custom ?? 0, pages };
}

describe.runIf(realPostgres)('a list over many partitions, called again on one connection', () => {
  it('makes at most four statements per list whatever page sizes are asked for, each page holding the right rows', async () => {
    const connection = await db.connectAgain(1);
    try {
      const on = fromPostgres(connection.sql);
      const expected = (
        await on.query<{ id: string }>(
          `select id from history where account_id = 'acct_a' and endpoint_id = 'ep_3'
           order by created_at desc, id desc limit 200`,
        )
      ).map((row) => row.id);
      for (let limit = 1; limit <= 100; limit += 1) {
        const first = await listHistory(on, 'ep_3', limit);
        const second = await listHistory(on, 'ep_3', limit, first.pageInfo.nextCursor);
        expect([...first.data, ...second.data].map((row) => row.id)).toEqual(expected.slice(0, 2 * limit));
        expect(first.pageInfo.hasMore && second.pageInfo.hasMore).toBe(true);
      }
      const [statements] = await on.query<{ n: number }>(
        `select count(*)::int as n from pg_prepared_statements
         where statement like '%from history where%' and statement not like '%pg_prepared_statements%'`,
      );
      // A first page and a page after a cursor: each prepared once per size a page asks for,
      // not once per page size (a client's choice, from 1 to 100).
      expect(statements?.n).toBeGreaterThan(0);
      expect(statements?.n).toBeLessThanOrEqual(8);
    } finally {
      await connection.close();
    }
  });

  it('keeps one plan instead of planning every call (postgres.js)', async () => {
    const connection = await db.connectAgain(1);
    try {
      const counts = await planCounts(connection);
      expect(counts.pages).toBe(CALLS);
      expect(counts.generic + counts.custom).toBe(CALLS);
      // PostgreSQL plans the first five calls afresh, then compares.
      expect(counts.custom).toBe(5);
      expect(counts.generic).toBe(CALLS - 5);
    } finally {
      await connection.close();
    }
  });

  it('keeps one plan instead of planning every call (node-postgres)', async () => {
    const client = new pg.Client({ connectionString: childDatabaseUrl(db) });
    await client.connect();
    try {
      const counts = await planCounts(client);
      expect(counts.custom).toBe(5);
      expect(counts.generic).toBe(CALLS - 5);
    } finally {
      await client.end();
    }
  });
});
