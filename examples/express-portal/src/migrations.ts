import { type Migration, migrate as runMigrations } from '@holdfast/db/migrate';
import { fromPg } from '@holdfast/db/pg';
import { migrations as deliveryMigrations } from '@holdfast/webhook-delivery';
import { migrations as portalMigrations } from '@holdfast/webhook-portal';
import type pg from 'pg';

const ordersTable: Migration = {
  id: 'express-portal/001_orders',
  sql: `
create table orders (
  id text primary key,
  account_id text not null,
  total bigint not null check (total >= 0),
  created_at timestamptz(3) not null default now()
);`,
};

/**
 * The service's migrations, oldest first: the sender's tables (`@holdfast/webhook-delivery`),
 * the portal's endpoint quotas (`@holdfast/webhook-portal`), then its own orders.
 */
export const migrations: readonly Migration[] = [...deliveryMigrations(), ...portalMigrations(), ordersTable];

/**
 * Applies each migration not yet recorded, in order, with the runner of `@holdfast/db/migrate`
 * on the node-postgres pool, under an advisory lock (any number of processes may run it).
 *
 * @example
 * ```ts
 * await migrate(new pg.Pool({ connectionString: process.env.DATABASE_URL }));
 * ```
 */
export function migrate(pool: pg.Pool): Promise<string[]> {
  return runMigrations(fromPg(pool), migrations, { lockId: 7346522003 });
}
