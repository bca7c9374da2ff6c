import { type Migration, migrate as runMigrations } from '@holdfast/db/migrate';
import { fromPg } from '@holdfast/db/pg';
import { migrations as idempotencyMigrations } from '@holdfast/idempotency';
import type pg from 'pg';

// The index serves the default sort (-createdAt) after the tenant column, exactly its ORDER BY
// terms, as @holdfast/cursor-pagination's README says.
const ordersTable: Migration = {
  id: 'fastify-orders/001_orders',
  sql: `
create table orders (
  id text primary key,
  account_id text not null,
  customer text not null,
  status text not null check (status in ('pending', 'paid', 'shipped', 'cancelled')),
  total bigint not null check (total >= 0),
  created_at timestamptz(3) not null
);
create index orders_account_created on orders (account_id, created_at desc nulls last, id desc nulls last);`,
};

/**
 * The service's migrations, oldest first: `@holdfast/idempotency`'s key table (its
 * `migrations/*.sql` files), then its own.
 *
 * @example
 * ```ts
 * await migrate(pool, migrations);
 * ```
 */
export const migrations: readonly Migration[] = [...idempotencyMigrations(), ordersTable];

/**
 * Applies each migration not yet recorded, in order, with the runner of `@holdfast/db` on the
 * node-postgres pool: each in its own transaction under an advisory lock, an edited applied
 * migration refused by its checksum. A team with its own runner applies the same list (or the
 * `.sql` files in the idempotency tarball) with it.
 *
 * @example
 * ```ts
 * await migrate(new pg.Pool({ connectionString: process.env.DATABASE_URL }));
 * ```
 */
export function migrate(pool: pg.Pool, list: readonly Migration[] = migrations): Promise<string[]> {
  return runMigrations(fromPg(pool), list, { lockId: 7346522002 });
}
