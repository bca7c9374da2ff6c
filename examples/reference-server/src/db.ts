import { randomBytes } from 'node:crypto';
import { migrations as apiKeyMigrations } from '@holdfast/api-keys/postgres';
import type { Keyring } from '@holdfast/cursor-pagination';
import { migrations as idempotencyMigrations } from '@holdfast/idempotency/postgres';
import { connect, type Database } from '@holdfast/pg';
import type { Migration } from '@holdfast/pg-migrate';
import { readMigrations } from '@holdfast/pg-migrate/files';
import { migrations as deliveryMigrations } from '@holdfast/webhook-delivery/postgres';
import { migrations as verifierMigrations } from '@holdfast/webhook-verifier/postgres';
import type postgres from 'postgres';
import type { Config } from './config';

const MIGRATIONS_DIR = new URL('../migrations/', import.meta.url);

/**
 * Opens PostgreSQL (`DATABASE_URL`) or embedded PGlite under `dataDir`, through postgres.js either
 * way. A PGlite directory another process holds is refused, or with `whenHeld: 'join'` (the CLI)
 * reached through that process's socket: never opened twice.
 */
export function openDatabase(config: Config, whenHeld: 'refuse' | 'join' = 'refuse'): Promise<Database> {
  return connect({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, max: 10, whenHeld });
}

/** The versioned SQL files of `migrations/`, in name order (`NNN_<what>.sql`). */
function migrationFiles(): Promise<Migration[]> {
  return readMigrations(MIGRATIONS_DIR);
}

/**
 * Every migration the server applies, in order: the packages' own versioned lists first (the
 * server's files build on their tables), then the server's files. The server and the
 * `keys:create` CLI both apply this list, so either may be the first to touch a database.
 */
export async function allMigrations(): Promise<Migration[]> {
  return [
    ...apiKeyMigrations,
    ...idempotencyMigrations,
    ...deliveryMigrations,
    ...verifierMigrations,
    ...(await migrationFiles()),
  ];
}

/**
 * The cursor keyring: `HOLDFAST_CURSOR_SECRET` when set, else a secret generated on first start
 * and kept in `holdfast_settings`, so cursors stay valid across restarts and instances.
 */
export async function cursorKeyring(sql: postgres.Sql, configured: string | undefined): Promise<Keyring> {
  if (configured) return { current: 'env', keys: { env: configured } };
  await sql`
    insert into holdfast_settings (name, value)
    values ('cursor_secret', ${randomBytes(32).toString('base64url')})
    on conflict (name) do nothing`;
  const [row] = await sql<
    { value: string }[]
  >`select value from holdfast_settings where name = 'cursor_secret'`;
  if (!row) throw new Error('cursor secret missing after insert');
  return { current: 'db1', keys: { db1: row.value } };
}
