import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import type { Db } from './index';

/**
 * One versioned migration: `id` is recorded with the sha-256 of `sql` once `sql` is applied,
 * and it is never applied again. A package's ids carry its name
 * (`@holdfast/idempotency/001_keys`); a service's own come from its files (`001_orders`).
 * `sql` may hold several statements, but no transaction control (`begin`, `commit`) and nothing
 * that cannot run in a transaction (`create index concurrently`).
 */
export interface Migration {
  readonly id: string;
  readonly sql: string;
  /**
   * The schema the migration's unqualified names land in: created when missing, and first in
   * `search_path` while the migration runs (the setting is put back after it). Absent: the
   * connection's own `search_path`.
   */
  readonly schema?: string;
}

/** Options of {@link migrate}. */
export interface MigrateOptions {
  /**
   * The schema of the table of applied ids, created when missing; the migrations themselves
   * create their objects where their SQL says (unqualified: the first schema of the
   * connection's `search_path`). Absent: the table goes where an unqualified name goes.
   */
  readonly schema?: string;
  /** The table of applied ids. @defaultValue `'holdfast_migrations'` */
  readonly table?: string;
  /**
   * The `pg_advisory_xact_lock` key every runner on the database shares; any constant works
   * as long as all runners agree. @defaultValue 7346522001
   */
  readonly lockId?: bigint | number;
}

const DEFAULT_LOCK_ID = 7_346_522_001n;
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

function identifier(name: string, what: string): string {
  if (!IDENTIFIER.test(name))
    throw new TypeError(`${what} ${JSON.stringify(name)} is not a lower-case SQL identifier`);
  return `"${name}"`;
}

/** A dollar-quote tag that occurs in none of `texts`. */
function dollarTag(base: string, ...texts: string[]): string {
  for (let n = 0; ; n += 1) {
    const tag = `$${base}${n === 0 ? '' : n}$`;
    if (texts.every((text) => !text.includes(tag))) return tag;
  }
}

const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/** The sha-256 of a migration's text, lower-case hex: what an applied migration is held to. */
export async function migrationChecksum(sql: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(sql)));
  let out = '';
  for (const byte of digest) out += byte.toString(16).padStart(2, '0');
  return out;
}

/**
 * Applies, in list order, every migration whose id is not yet recorded, each in its own
 * transaction with its id and checksum: one statement (a `DO` block) that takes a
 * transaction-scoped advisory lock, checks the id is still unrecorded, runs the SQL and records
 * it. So it runs on any {@link Db} (a pool included: one statement needs no connection of its
 * own), runners starting together queue on the lock and skip what another applied, and a
 * failing migration leaves nothing of itself behind (the ones before it stay applied). Returns
 * the ids this run applied, in order (not those a concurrent runner applied first).
 *
 * @throws TypeError before touching the database when two migrations share an id or one is
 * empty, or an option is no identifier; Error naming the ids when an applied migration's text
 * changed since (its checksum differs): nothing is applied then; whatever PostgreSQL raises
 * for a failing migration.
 * @example
 * ```ts
 * import { migrate, readMigrations } from '@holdfast/db/migrate';
 * import { fromPg } from '@holdfast/db/pg';
 * await migrate(fromPg(pool), [...idempotencyMigrations, ...(await readMigrations(new URL('./migrations/', import.meta.url)))]);
 * ```
 */
export async function migrate(
  db: Db,
  migrations: readonly Migration[],
  options: MigrateOptions = {},
): Promise<string[]> {
  const lockId = BigInt(options.lockId ?? DEFAULT_LOCK_ID);
  const table = `${options.schema === undefined ? '' : `${identifier(options.schema, 'schema')}.`}${identifier(
    options.table ?? 'holdfast_migrations',
    'table',
  )}`;
  const seen = new Set<string>();
  for (const migration of migrations) {
    if (migration.id === '') throw new TypeError('a migration id must not be empty');
    if (seen.has(migration.id))
      throw new TypeError(`migration id ${JSON.stringify(migration.id)} is given twice`);
    seen.add(migration.id);
  }
  const sums = await Promise.all(migrations.map((migration) => migrationChecksum(migration.sql)));

  // The table, under the lock: two runners creating it at once would collide in the catalog.
  // `checksum` is added to a table an earlier runner made without it (such rows get theirs
  // below); `applied_by` tells this run's applications from a concurrent runner's.
  await db.query(`do $hf$ begin
    perform pg_advisory_xact_lock(${lockId});
    ${options.schema === undefined ? '' : `create schema if not exists ${identifier(options.schema, 'schema')};`}
    create table if not exists ${table} (
      id text primary key,
      checksum text,
      applied_at timestamptz(3) not null default now(),
      applied_by text
    );
    alter table ${table} add column if not exists checksum text;
    alter table ${table} add column if not exists applied_by text;
  end $hf$`);

  const applied = new Map(
    (await db.query<{ id: string; checksum: string | null }>(`select id, checksum from ${table}`)).map(
      (row) => [row.id, row.checksum],
    ),
  );
  const edited: string[] = [];
  for (const [i, migration] of migrations.entries()) {
    const sum = sums[i];
    const recorded = applied.get(migration.id);
    if (recorded === undefined || sum === undefined) continue;
    if (recorded === null)
      await db.query(`update ${table} set checksum = $1::text where id = $2::text and checksum is null`, [
        sum,
        migration.id,
      ]);
    else if (recorded !== sum) edited.push(migration.id);
  }
  if (edited.length > 0)
    throw new Error(
      `applied migration${edited.length === 1 ? '' : 's'} ${edited.join(', ')} changed since (checksum differs): add a new migration instead of editing one`,
    );

  const run = crypto.randomUUID();
  const ran: string[] = [];
  for (const [i, migration] of migrations.entries()) {
    const sum = sums[i];
    if (applied.has(migration.id) || sum === undefined) continue;
    const inner = dollarTag('hf_sql', migration.sql);
    const outer = dollarTag('hf_do', migration.sql, inner);
    // Another runner may have applied it since the read above: checked again under the lock.
    await db.query(`do ${outer} declare path text; begin
      perform pg_advisory_xact_lock(${lockId});
      if exists (select 1 from ${table} where id = ${literal(migration.id)}) then return; end if;
      ${
        migration.schema === undefined
          ? `execute ${inner}${migration.sql}${inner};`
          : `create schema if not exists ${identifier(migration.schema, 'schema')};
      path := current_setting('search_path');
      perform set_config('search_path', ${literal(identifier(migration.schema, 'schema'))}, true);
      execute ${inner}${migration.sql}${inner};
      perform set_config('search_path', path, true);`
      }
      insert into ${table} (id, checksum, applied_by) values (${literal(migration.id)}, ${literal(sum)}, '${run}');
    end ${outer}`);
    const mine = await db.query(
      `select 1 as applied from ${table} where id = $1::text and applied_by = $2::text`,
      [migration.id, run],
    );
    if (mine.length > 0) ran.push(migration.id);
  }
  return ran;
}

/** Options of {@link readMigrations}. */
export interface ReadMigrationsOptions {
  /**
   * Which file names are migrations. @defaultValue `/^\d{3}_[a-z0-9_]+\.sql$/`
   * (`001_accounts.sql`, `100_orders.sql`, ...)
   */
  readonly pattern?: RegExp;
  /** Put before each id (`@holdfast/idempotency/` gives `@holdfast/idempotency/001_keys`). @defaultValue `''` */
  readonly prefix?: string;
}

/**
 * The versioned SQL files of `directory`, in name order, each as a {@link Migration} whose id
 * is the file name without `.sql` (after `prefix`). Name files with a zero-padded number first,
 * so name order is version order, and never rename or edit one that has been applied: add a new
 * file instead ({@link migrate} refuses an edited one).
 *
 * @example
 * ```ts
 * await migrate(db, await readMigrations(new URL('../migrations/', import.meta.url)));
 * ```
 */
export async function readMigrations(
  directory: URL | string,
  options: ReadMigrationsOptions = {},
): Promise<Migration[]> {
  const { pattern = /^\d{3}_[a-z0-9_]+\.sql$/, prefix = '' } = options;
  const base = typeof directory === 'string' ? directory.replace(/\/?$/, '/') : directory;
  const names = (await readdir(base)).filter((name) => pattern.test(name)).sort();
  return Promise.all(
    names.map(async (name) => ({
      id: `${prefix}${name.replace(/\.sql$/, '')}`,
      sql: await readFile(typeof base === 'string' ? `${base}${name}` : new URL(name, base), 'utf8'),
    })),
  );
}

/** Options of {@link sqlMigrations}. */
export interface SqlMigrationsOptions {
  /** The schema the migrations create their objects in (see {@link Migration.schema}). */
  readonly schema?: string;
}

/**
 * A package's migrations from its `migrations/NNN_name.sql` files, read synchronously in name
 * order: ids `prefix/NNN_name`, with `@schema` after them when a schema is given, so the same
 * package can be applied to two schemas of one database and each is recorded.
 *
 * @example
 * ```ts
 * export const migrations = (options?: SqlMigrationsOptions) =>
 *   sqlMigrations(new URL('../migrations/', import.meta.url), '@acme/ledger', options);
 * ```
 */
export function sqlMigrations(
  directory: URL,
  prefix: string,
  options: SqlMigrationsOptions = {},
): Migration[] {
  const { schema } = options;
  if (schema !== undefined) identifier(schema, 'schema');
  const names = readdirSync(directory)
    .filter((name) => /^\d{3}_[a-z0-9_]+\.sql$/.test(name))
    .sort();
  return names.map((name) => ({
    id: `${prefix}/${name.replace(/\.sql$/, '')}${schema === undefined ? '' : `@${schema}`}`,
    sql: readFileSync(new URL(name, directory), 'utf8'),
    ...(schema === undefined ? {} : { schema }),
  }));
}

/**
 * How a package names its tables in its statements: `"schema".table` under a chosen schema, or
 * the bare name (found through the connection's `search_path`) when none is chosen.
 *
 * @throws TypeError when `schema` is not a lower-case SQL identifier.
 * @example
 * ```ts
 * const table = qualify('billing');
 * const text = `select id from ${table('holdfast_api_keys')} where id = $1`;
 * ```
 */
export function qualify(schema?: string): (table: string) => string {
  if (schema === undefined) return (table) => table;
  const prefix = `${identifier(schema, 'schema')}.`;
  return (table) => `${prefix}${table}`;
}
export { migrationReadiness, type Readiness, type ReadinessOptions } from './readiness';
