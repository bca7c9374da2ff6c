import { migrate as run } from '@holdfast/db/migrate';
import { fromPostgres } from '@holdfast/db/postgres';
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

/**
 * The runner of `@holdfast/db/migrate` on a postgres.js pool: applies, in list order, every
 * migration whose id is not yet recorded, each in its own transaction under a
 * transaction-scoped advisory lock, recording its id and the sha-256 of its text; runners
 * starting together apply each migration once, a failing migration leaves nothing of itself
 * (those before it stay applied), and an applied migration whose text changed is refused.
 * Returns the ids applied.
 *
 * @throws TypeError before touching the database when two migrations share an id or one is
 * empty; Error when an applied migration was edited; whatever PostgreSQL raises for a failing
 * migration.
 * @example
 * ```ts
 * import { migrate } from '@holdfast/pg-migrate';
 * import { migrations as idempotencyMigrations } from '@holdfast/idempotency';
 * const applied = await migrate(sql, [...idempotencyMigrations(), { id: '001_orders', sql: 'create table orders (id text primary key)' }]);
 * ```
 */
export function migrate(
  sql: postgres.Sql,
  migrations: readonly Migration[],
  options: MigrateOptions = {},
): Promise<string[]> {
  return run(fromPostgres(sql), migrations, {
    ...(options.table === undefined ? {} : { table: options.table }),
    ...(options.lockKey === undefined ? {} : { lockId: options.lockKey }),
  });
}
