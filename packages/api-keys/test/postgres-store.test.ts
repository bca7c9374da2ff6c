import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { migrate } from '@holdfast/pg-migrate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, hashKey } from '../src/index';
import { migrations, postgresApiKeyStore } from '../src/postgres';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await migrate(db.sql, migrations);
  expect(await migrate(db.sql, migrations)).toEqual([]);
});
afterAll(() => db?.close());

describe(`postgresApiKeyStore (${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('keeps the hash and the first 12 characters, never the key', async () => {
    const store = postgresApiKeyStore(db.sql);
    const key = await createKey(store, 'acct_1', ['orders:read'], 'live');
    const rows = await db.sql<{ key_hash: string; key_prefix: string }[]>`
      select key_hash, key_prefix from holdfast_api_keys where account = 'acct_1'`;
    expect(rows).toEqual([{ key_hash: hashKey(key), key_prefix: key.slice(0, 12) }]);
    const found = await store.find(hashKey(key));
    expect(found?.id).toMatch(/^key_/);
    expect(found).toMatchObject({ account: 'acct_1', scopes: ['orders:read'] });
    expect(await store.find(hashKey(`${key}x`))).toBeUndefined();
  });

  it('saving a key again changes its account and scopes, not its id', async () => {
    const store = postgresApiKeyStore(db.sql);
    const key = 'hf_test_0123456789abcdefghij';
    await store.save({ key, account: 'acct_2', scopes: ['*'] });
    const before = await store.find(hashKey(key));
    await store.save({ key, account: 'acct_3', scopes: ['orders:read', 'orders:write'] });
    expect(await store.find(hashKey(key))).toEqual({
      id: before?.id,
      account: 'acct_3',
      scopes: ['orders:read', 'orders:write'],
    });
  });
});
