import { type Migration, sqlMigrations } from '@holdfast/db/migrate';

/**
 * The management API's table (the per-endpoint quotas of test events and recoveries),
 * `migrations/NNN_name.sql` of this package, as migrations for `migrate()` of
 * `@holdfast/db/migrate`, beside `@holdfast/webhook-delivery`'s.
 *
 * @example
 * ```ts
 * await migrate(db, [...deliveryMigrations(), ...migrations()]);
 * ```
 */
export function migrations(options: { readonly schema?: string } = {}): Migration[] {
  return sqlMigrations(new URL('../migrations/', import.meta.url), '@holdfast/webhook-portal', options);
}
