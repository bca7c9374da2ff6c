import type { Migration } from '@holdfast/db/migrate';
import { fromPostgres } from '@holdfast/db/postgres';
import type { ISql as Sql } from 'postgres';
import { dbApiKeyStore } from './db-store';
import type { ApiKeyStore } from './store';

/**
 * The keys' table as versioned migrations, for any runner that records applied ids (each is also
 * shipped as a plain `.sql` file under `migrations/`). Only the
 * SHA-256 of each key is stored, with its first 12 characters (`key_prefix`) to tell keys apart
 * in a list. `if not exists`, so a database that made the same table before adopts it.
 *
 * @example
 * ```ts
 * import { migrate } from '@holdfast/db/migrate';
 * await migrate(fromPostgres(sql), [...migrations, ...yourOwnMigrations]);
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
 * Keys in `holdfast_api_keys` (see {@link migrations}) on a postgres.js pool: the statements of
 * `dbApiKeyStore` (the root), sent through postgres.js. Ids are `key_` opaque ids.
 *
 * @example
 * ```ts
 * const store = postgresApiKeyStore(sql);
 * await store.save({ key, account: 'acct_1', scopes: ['*'] });
 * ```
 */
export function postgresApiKeyStore(sql: Sql): ApiKeyStore {
  return dbApiKeyStore(fromPostgres(sql));
}
