import { type Migration, migrate as runMigrations } from '@holdfast/db/migrate';
import { fromPostgres } from '@holdfast/db/postgres';
import { migrations as verifierMigrations } from '@holdfast/webhook-verifier/postgres';
import type { Sql } from 'postgres';

// What this service keeps of the orders it hears about: the business table the inbox feeds.
const ordersTable: Migration = {
  id: 'express-receiver/001_orders',
  sql: `
create table received_orders (
  id text primary key,
  status text not null,
  total bigint not null,
  sequence bigint,
  updated_at timestamptz(3) not null default date_trunc('milliseconds', now())
);`,
};

/**
 * The service's migrations, oldest first: the verifier's tables (dedup, versions, the inbox),
 * then its own.
 *
 * @example
 * ```ts
 * await migrate(sql, migrations);
 * ```
 */
export const migrations: readonly Migration[] = [...verifierMigrations(), ordersTable];

/**
 * Applies each migration not yet recorded, in order, with the runner of `@holdfast/db`: each in
 * its own transaction under an advisory lock, so two instances starting together never apply
 * one twice, and an edited applied migration is refused by its checksum. A team with its own
 * runner (node-pg-migrate, Flyway, Prisma Migrate) applies the same list, or the `.sql` files
 * the verifier's tarball ships, with that instead.
 *
 * @example
 * ```ts
 * const sql = postgres(process.env.DATABASE_URL ?? '');
 * await migrate(sql);
 * ```
 */
export function migrate(sql: Sql, list: readonly Migration[] = migrations): Promise<string[]> {
  return runMigrations(fromPostgres(sql), list);
}
