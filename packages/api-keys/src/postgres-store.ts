import type { ISql as Sql } from 'postgres';
import { opaqueId } from './id';
import { hashKey } from './key';
import type { ApiKeyStore } from './store';

/** One versioned migration: record `id` once `sql` is applied, never apply it again. */
export interface Migration {
  readonly id: string;
  readonly sql: string;
}

/**
 * The keys' table as versioned migrations, for any runner that records applied ids (each is also
 * shipped as a plain `.sql` file under `migrations/`). Only the
 * SHA-256 of each key is stored, with its first 12 characters (`key_prefix`) to tell keys apart
 * in a list. `if not exists`, so a database that made the same table before adopts it.
 *
 * @example
 * ```ts
 * import { migrate } from './your-migration-runner';
 * await migrate(sql, [...migrations, ...yourOwnMigrations]);
 * ```
 */
export const migrations: readonly Migration[] = [
  {
    id: '@holdfast/api-keys/001_keys',
    sql: `
create table if not exists holdfast_api_keys (
  id text primary key,
  key_hash text not null unique,
  key_prefix text not null,
  account text not null,
  scopes text[] not null,
  created_at timestamptz(3) not null default now()
);
create index if not exists holdfast_api_keys_account on holdfast_api_keys (account);
`,
  },
];

/**
 * Keys in `holdfast_api_keys` (see {@link migrations}); ids are `key_` opaque ids.
 *
 * @example
 * ```ts
 * const store = postgresApiKeyStore(sql);
 * await store.save({ key, account: 'acct_1', scopes: ['*'] });
 * ```
 */
export function postgresApiKeyStore(sql: Sql): ApiKeyStore {
  return {
    async find(hash) {
      const [row] = await sql<{ id: string; account: string; scopes: string[] }[]>`
        select id, account, scopes from holdfast_api_keys where key_hash = ${hash}`;
      return row;
    },
    async save({ key, account, scopes }) {
      await sql`
        insert into holdfast_api_keys (id, key_hash, key_prefix, account, scopes)
        values (${opaqueId('key')}, ${hashKey(key)}, ${key.slice(0, 12)}, ${account}, ${sql.array([...scopes])})
        on conflict (key_hash) do update set account = excluded.account, scopes = excluded.scopes`;
    },
  };
}
