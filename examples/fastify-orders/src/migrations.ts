import { migrations as idempotencyMigrations } from '@holdfast/idempotency/postgres';
import type pg from 'pg';

/** A versioned migration: applied once, in order, and recorded by `id`. */
export interface Migration {
  readonly id: string;
  readonly sql: string;
}

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
 * The service's migrations, oldest first: `@holdfast/idempotency`'s key table (imported from
 * `/postgres`, which loads no postgres.js at run time: it is only named in types there), then
 * its own.
 *
 * @example
 * ```ts
 * await migrate(pool, migrations);
 * ```
 */
export const migrations: readonly Migration[] = [...idempotencyMigrations, ordersTable];

/**
 * The least migration runner, on node-postgres: applies each migration not yet recorded in
 * `holdfast_migrations`, in order, in one transaction held under an advisory lock. A team with
 * its own runner applies the same list (or the `.sql` files in the idempotency tarball) with it.
 *
 * @example
 * ```ts
 * await migrate(new pg.Pool({ connectionString: process.env.DATABASE_URL }));
 * ```
 */
export async function migrate(pool: pg.Pool, list: readonly Migration[] = migrations): Promise<string[]> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query('select pg_advisory_xact_lock(7346522002)');
    await client.query(
      'create table if not exists holdfast_migrations (id text primary key, applied_at timestamptz not null default now())',
    );
    const { rows } = await client.query<{ id: string }>('select id from holdfast_migrations');
    const applied = new Set(rows.map((row) => row.id));
    const now: string[] = [];
    for (const migration of list) {
      if (applied.has(migration.id)) continue;
      await client.query(migration.sql);
      await client.query('insert into holdfast_migrations (id) values ($1)', [migration.id]);
      now.push(migration.id);
    }
    await client.query('commit');
    return now;
  } catch (error) {
    await client.query('rollback');
    throw error;
  } finally {
    client.release();
  }
}
