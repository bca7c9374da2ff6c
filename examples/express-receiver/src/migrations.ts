import { migrations as verifierMigrations } from '@holdfast/webhook-verifier/postgres';
import type { Sql } from 'postgres';

/** A versioned migration: applied once, in order, and recorded by `id`. */
export interface Migration {
  readonly id: string;
  readonly sql: string;
}

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
export const migrations: readonly Migration[] = [...verifierMigrations, ordersTable];

/**
 * The least migration runner: applies each migration not yet recorded in `holdfast_migrations`,
 * in order, in one transaction held under an advisory lock, so two instances starting together
 * never apply one twice. A team with its own runner (node-pg-migrate, Flyway, Prisma Migrate)
 * applies the same list, or the `.sql` files the verifier's tarball ships, with that instead.
 *
 * @example
 * ```ts
 * const sql = postgres(process.env.DATABASE_URL ?? '');
 * await migrate(sql);
 * ```
 */
export async function migrate(sql: Sql, list: readonly Migration[] = migrations): Promise<string[]> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(7346522001)`;
    await tx`create table if not exists holdfast_migrations (id text primary key, applied_at timestamptz not null default now())`;
    const applied = new Set(
      (await tx<{ id: string }[]>`select id from holdfast_migrations`).map((row) => row.id),
    );
    const now: string[] = [];
    for (const migration of list) {
      if (applied.has(migration.id)) continue;
      await tx.unsafe(migration.sql);
      await tx`insert into holdfast_migrations (id) values (${migration.id})`;
      now.push(migration.id);
    }
    return now;
  });
}
