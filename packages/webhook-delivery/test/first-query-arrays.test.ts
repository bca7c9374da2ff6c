import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createEndpoint, endpointConcurrency, migrations } from '../src/index';

// A statement that takes an array must work as the first query of a new client: postgres.js's
// sql.array() serialized `['we_1']` as `we_1` before the connection had fetched the array types
// ("malformed array literal"), which is what an adopter's script hits first. Each case opens a
// client of its own (PGlite serves one connection, so this needs DATABASE_URL, as CI sets).

const ACCOUNT = 'acct_first_query';
let db: TestDatabase;
let id = '';

beforeAll(async () => {
  db = await createTestDatabase();
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
  const created = await createEndpoint(
    fromPostgres(db.sql),
    { account: ACCOUNT, url: 'https://example.com/hook', eventTypes: ['order.created', 'a"b\\c'] },
    { resolve: async () => ['93.184.216.34'], concurrencyMax: 7 },
  );
  id = created.endpoint.id;
});
afterAll(async () => {
  await db?.close();
});

it.skipIf(!realPostgres)('endpointConcurrency is the first query of a new client', async () => {
  const fresh = await db.connectAgain(1);
  try {
    const limits = await endpointConcurrency(fromPostgres(fresh.sql), [id, 'we_missing']);
    // The endpoint's own row (its ceiling of 7; a new endpoint starts at 4 and earns the rest),
    // and nothing for the id that does not exist.
    expect(limits).toEqual(new Map([[id, { current: 4, max: 7 }]]));
  } finally {
    await fresh.close();
  }
});

it.skipIf(!realPostgres)(
  'createEndpoint keeps event types with quotes and backslashes as the first query',
  async () => {
    const fresh = await db.connectAgain(1);
    try {
      const { endpoint } = await createEndpoint(
        fromPostgres(fresh.sql),
        { account: ACCOUNT, url: 'https://example.com/other', eventTypes: ['x', 'a"b\\c', 'd,e{f}'] },
        { resolve: async () => ['93.184.216.34'] },
      );
      expect(endpoint.eventTypes).toEqual(['x', 'a"b\\c', 'd,e{f}']);
    } finally {
      await fresh.close();
    }
  },
);
