import type { Migration } from '@holdfast/db/migrate';
import { fromPostgres } from '@holdfast/db/postgres';
import type postgres from 'postgres';
import { dbIdempotencyStore } from './db-store';
import type { IdempotencyStore } from './store';

/**
 * The store's table as versioned migrations, for any runner that records applied ids (each is
 * also shipped as a plain `.sql` file under `migrations/`). A normal logged table: an unlogged one would lose every
 * stored answer in a crash, exactly when clients retry. `token` names the attempt holding an
 * unanswered key and `locked_until` ends its lease; `expires_at` drives the purge. The first
 * migration says `if not exists` so databases that applied the former idempotent DDL adopt it.
 *
 * @example
 * ```ts
 * import { migrate } from './your-migration-runner';
 * await migrate(sql, [...migrations, ...yourOwnMigrations]);
 * ```
 */
export const migrations: readonly Migration[] = [
  {
    id: '@holdfast/idempotency/001_keys',
    sql: `
create table if not exists holdfast_idempotency_keys (
  account text not null,
  key text not null check (char_length(key) between 1 and 255),
  fingerprint text not null,
  token text,
  locked_until timestamptz not null,
  response_status smallint,
  response_headers jsonb,
  response_body bytea,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  primary key (account, key)
);
create index if not exists holdfast_idempotency_keys_expires_at_idx
  on holdfast_idempotency_keys (expires_at);
`,
  },
];

/**
 * Keys in `holdfast_idempotency_keys` (see {@link migrations}), shared by every process on the
 * database: {@link dbIdempotencyStore} over `fromPostgres(sql)`, the same statements every
 * driver runs. Each operation is one autocommit statement: a claim is visible to other
 * processes at once, so they answer 409 or 422 while the first request runs. Takes the pool
 * (`Sql`), never a transaction, for that reason.
 *
 * @example
 * ```ts
 * const store = postgresIdempotencyStore(sql);
 * app.post('/v1/emails', idempotency({ store, account: (c) => c.get('account') }), sendEmailRoute);
 * schedulePurge(store); // every minute, never two purges at once
 * ```
 */
export function postgresIdempotencyStore(sql: postgres.Sql): IdempotencyStore {
  return dbIdempotencyStore(fromPostgres(sql));
}
