import type postgres from 'postgres';
import type { Migration } from './migration';

/** Options of {@link migrate}. */
export interface MigrateOptions {
  /** The table of applied ids. @defaultValue `'holdfast_migrations'` */
  table?: string;
  /**
   * The `pg_advisory_xact_lock` key every runner on the database shares; any constant works
   * as long as all runners agree. @defaultValue 7346522001
   */
  lockKey?: bigint;
}

const DEFAULT_LOCK_KEY = 7_346_522_001n;

/**
 * Applies, in list order, every migration whose id is not yet recorded, and records each id,
 * all in ONE transaction under a transaction-scoped advisory lock
 * (https://www.postgresql.org/docs/current/explicit-locking.html#ADVISORY-LOCKS): runners
 * starting together queue on the lock and the later ones find everything applied; a failing
 * migration rolls the whole run back, so nothing is left half-written. Returns the ids applied.
 * Pass the pool (`postgres(url)`): the runner opens its own transaction.
 *
 * @throws TypeError before touching the database when two migrations share an id or one is
 * empty; whatever PostgreSQL raises for a failing migration (nothing is recorded then).
 * @example
 * ```ts
 * import { migrate } from '@holdfast/pg-migrate';
 * import { migrations as idempotencyMigrations } from '@holdfast/idempotency/postgres';
 * const applied = await migrate(sql, [...idempotencyMigrations, { id: '001_orders', sql: 'create table orders (id text primary key)' }]);
 * ```
 */
export async function migrate(
  sql: postgres.Sql,
  migrations: readonly Migration[],
  options: MigrateOptions = {},
): Promise<string[]> {
  const { table = 'holdfast_migrations', lockKey = DEFAULT_LOCK_KEY } = options;
  const seen = new Set<string>();
  for (const migration of migrations) {
    if (migration.id === '') throw new TypeError('a migration id must not be empty');
    if (seen.has(migration.id))
      throw new TypeError(`migration id ${JSON.stringify(migration.id)} is given twice`);
    seen.add(migration.id);
  }
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${lockKey.toString()}::bigint)`;
    await tx`
      create table if not exists ${tx(table)} (
        id text primary key,
        applied_at timestamptz(3) not null default now()
      )`;
    const done = new Set((await tx<{ id: string }[]>`select id from ${tx(table)}`).map((row) => row.id));
    const applied: string[] = [];
    for (const migration of migrations) {
      if (done.has(migration.id)) continue;
      await tx.unsafe(migration.sql);
      await tx`insert into ${tx(table)} (id) values (${migration.id})`;
      applied.push(migration.id);
    }
    return applied;
  });
}
