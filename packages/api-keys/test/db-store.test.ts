import { migrate } from '@holdfast/db/migrate';
import { fromPg } from '@holdfast/db/pg';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, dbApiKeyStore, hashKey } from '../src/index';
import { migrations, postgresApiKeyStore } from '../src/postgres';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await migrate(fromPostgres(db.sql), migrations);
  expect(await migrate(fromPostgres(db.sql), migrations)).toEqual([]);
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

describe.skipIf(!realPostgres)('on a fresh client that has run nothing else (needs DATABASE_URL)', () => {
  it('postgres.js: createKey stores the scopes as text[]', async () => {
    const fresh = await db.connectAgain(1);
    try {
      const store = postgresApiKeyStore(fresh.sql);
      const key = await createKey(store, 'acct_fresh_js', ['orders:read', 'orders:write'], 'test');
      expect(await store.find(hashKey(key))).toMatchObject({
        account: 'acct_fresh_js',
        scopes: ['orders:read', 'orders:write'],
      });
    } finally {
      await fresh.close();
    }
  });

  it('node-postgres: dbApiKeyStore keeps the keys on the service pool', async () => {
    const url = new URL(process.env.DATABASE_URL ?? '');
    url.searchParams.set('options', `-c search_path=${db.schema}`);
    const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
    try {
      const store = dbApiKeyStore(fromPg(pool));
      const key = await createKey(store, 'acct_fresh_pg', ['*'], 'live');
      expect(await store.find(hashKey(key))).toMatchObject({ account: 'acct_fresh_pg', scopes: ['*'] });
      await store.save({ key, account: 'acct_fresh_pg', scopes: [] });
      expect(await store.find(hashKey(key))).toMatchObject({ scopes: [] });
      // The same statements as the postgres.js store: one path, either driver reads the other's rows.
      expect(await postgresApiKeyStore(db.sql).find(hashKey(key))).toMatchObject({
        account: 'acct_fresh_pg',
      });
    } finally {
      await pool.end();
    }
  });
});
