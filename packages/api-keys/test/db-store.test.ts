import { randomBytes } from 'node:crypto';
import type { Db } from '@holdfast/db';
import { migrate } from '@holdfast/db/migrate';
import { fromPg } from '@holdfast/db/pg';
import { fromPostgres } from '@holdfast/db/postgres';
import { childDatabaseUrl, createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, dbApiKeyStore, hashKey, migrations } from '../src/index';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await migrate(fromPostgres(db.sql), migrations());
  expect(await migrate(fromPostgres(db.sql), migrations())).toEqual([]);
});
afterAll(() => db?.close());

describe(`dbApiKeyStore (${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('ships its table as plain SQL files, listed in order', () => {
    expect(migrations().map((migration) => migration.id)).toEqual(['@holdfast/api-keys/001_keys']);
  });

  it('keeps the hash and the first 12 characters, never the key', async () => {
    const store = dbApiKeyStore(fromPostgres(db.sql));
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
    const store = dbApiKeyStore(fromPostgres(db.sql));
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

describe.runIf(realPostgres)('on a fresh client of each driver, which has run no other query', () => {
  // What an adopter's first request does: createKey on a connection opened for it. Nothing runs
  // on these clients before the store's own statements (no migration, no warm-up query).
  const drivers: [string, () => Promise<{ db: Db; end: () => Promise<void> }>][] = [
    [
      'postgres.js',
      async () => {
        const sql = postgres(process.env.DATABASE_URL ?? '', {
          max: 1,
          connection: { search_path: db.schema },
          onnotice: () => {},
        });
        return { db: fromPostgres(sql), end: () => sql.end() };
      },
    ],
    [
      'node-postgres client',
      async () => {
        const client = new pg.Client({ connectionString: childDatabaseUrl(db) });
        await client.connect();
        return { db: fromPg(client), end: () => client.end() };
      },
    ],
    [
      'node-postgres pool',
      async () => {
        const pool = new pg.Pool({ connectionString: childDatabaseUrl(db), max: 1 });
        return { db: fromPg(pool), end: () => pool.end() };
      },
    ],
  ];

  for (const [name, open] of drivers) {
    it(`${name}: createKey stores the scopes as text[] and finds the key again`, async () => {
      const fresh = await open();
      try {
        const store = dbApiKeyStore(fresh.db);
        const account = `acct_fresh_${name.replace(/\W/g, '_')}`;
        const key = await createKey(store, account, ['orders:read', 'orders:write'], 'live');
        expect(await store.find(hashKey(key))).toMatchObject({
          account,
          scopes: ['orders:read', 'orders:write'],
        });
        await store.save({ key, account, scopes: [] });
        expect(await store.find(hashKey(key))).toMatchObject({ scopes: [] });
      } finally {
        await fresh.end();
      }
      // One path: the other driver reads what this one wrote.
      const rows = await db.sql<
        { scopes: string[] }[]
      >`select scopes from holdfast_api_keys where account like 'acct_fresh_%'`;
      expect(rows.length).toBeGreaterThan(0);
    });
  }

  it('keeps its table under the schema it is given, on a fresh client', async () => {
    const schema = `keys_${randomBytes(4).toString('hex')}`;
    try {
      const applied = await migrate(fromPostgres(db.sql), migrations({ schema }));
      expect(applied).toEqual([`@holdfast/api-keys/001_keys@${schema}`]);
      const client = new pg.Client({ connectionString: childDatabaseUrl(db) });
      await client.connect();
      try {
        const store = dbApiKeyStore(fromPg(client), { schema });
        const key = await createKey(store, 'acct_schema', ['*']);
        expect(await store.find(hashKey(key))).toMatchObject({ account: 'acct_schema', scopes: ['*'] });
      } finally {
        await client.end();
      }
      const [row] = await db.sql<{ n: number }[]>`
        select count(*)::int as n from ${db.sql(schema)}.holdfast_api_keys where account = 'acct_schema'`;
      expect(row?.n).toBe(1);
      // Not in the search_path's table.
      expect(await db.sql`select 1 from holdfast_api_keys where account = 'acct_schema'`).toHaveLength(0);
    } finally {
      await db.sql.unsafe(`drop schema if exists ${schema} cascade`);
    }
  });
});
