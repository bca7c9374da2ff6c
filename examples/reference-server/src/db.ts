import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import type { Keyring } from '@holdfast/cursor-pagination';
import { connect, type Database } from '@holdfast/pg';
import { migrations as verifierMigrations } from '@holdfast/webhook-verifier/postgres';
import type postgres from 'postgres';
import type { Config } from './config';

/** A migration: an id recorded once applied, and its SQL. */
export interface Migration {
  readonly id: string;
  readonly sql: string;
}

const MIGRATIONS_DIR = new URL('../migrations/', import.meta.url);
// Any constant works; it only has to be the same in every instance (pg_advisory_xact_lock takes a bigint).
const MIGRATION_LOCK = 7_346_522_001n;

/** Opens PostgreSQL (`DATABASE_URL`) or embedded PGlite under `dataDir`, through postgres.js either way. */
export function openDatabase(config: Config): Promise<Database> {
  return connect({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, max: 10 });
}

/**
 * Every versioned migration, in the order they apply: the packages' own (ids such as
 * `webhook-verifier/001_...`; the server's files build on their tables), then the SQL files of
 * `migrations/` in name order (`NNN_<what>.sql`).
 */
export async function migrationFiles(): Promise<Migration[]> {
  const names = (await readdir(MIGRATIONS_DIR)).filter((name) => /^\d{3}_[a-z0-9_]+\.sql$/.test(name)).sort();
  const files = await Promise.all(
    names.map(async (name) => ({
      id: name.replace(/\.sql$/, ''),
      sql: await readFile(new URL(name, MIGRATIONS_DIR), 'utf8'),
    })),
  );
  return [...verifierMigrations, ...files];
}

/**
 * Applies the packages' idempotent schemas, then every versioned migration not yet recorded,
 * all in one transaction under a PostgreSQL advisory lock: two instances starting together
 * queue on the lock, and the second finds everything applied. A failing migration rolls
 * back whole, so nothing is left half-written.
 */
export async function migrate(
  sql: postgres.Sql,
  packageSchemas: readonly Migration[],
  migrations: readonly Migration[],
): Promise<string[]> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK.toString()}::bigint)`;
    await tx`
      create table if not exists holdfast_migrations (
        id text primary key,
        applied_at timestamptz(3) not null default now()
      )`;
    for (const schema of packageSchemas) await tx.unsafe(schema.sql);
    const done = new Set(
      (await tx<{ id: string }[]>`select id from holdfast_migrations`).map((row) => row.id),
    );
    const applied: string[] = [];
    for (const migration of migrations) {
      if (done.has(migration.id)) continue;
      await tx.unsafe(migration.sql);
      await tx`insert into holdfast_migrations (id) values (${migration.id})`;
      applied.push(migration.id);
    }
    return applied;
  });
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
