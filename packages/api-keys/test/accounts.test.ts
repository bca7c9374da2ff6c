import { migrate } from '@holdfast/db/migrate';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKey, dbApiKeyStore, keyAccounts, migrations } from '../src/index';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ max: 1 });
  await migrate(fromPostgres(db.sql), migrations());
  // The same tables again in a schema of their own: what one lists, the other does not.
  await migrate(fromPostgres(db.sql), migrations({ schema: `${db.schema}_keys` }));
});
afterAll(async () => {
  await db?.sql.unsafe(`drop schema if exists ${db.schema}_keys cascade`);
  await db?.close();
});

it('lists each account holding a key once, in order, in the tables of the schema asked', async () => {
  const pool = fromPostgres(db.sql);
  expect(await keyAccounts(pool)).toEqual([]);
  const store = dbApiKeyStore(pool);
  await createKey(store, 'acct_b', ['*']);
  await createKey(store, 'acct_a', ['orders:read']);
  await createKey(store, 'acct_b', ['orders:read'], 'live');
  expect(await keyAccounts(pool)).toEqual(['acct_a', 'acct_b']);
  expect(await keyAccounts(pool, { schema: `${db.schema}_keys` })).toEqual([]);
});
