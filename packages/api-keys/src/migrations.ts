import { type Migration, sqlMigrations } from '@holdfast/db/migrate';

/**
 * The keys' table, `migrations/NNN_name.sql` of this package (in the tarball, plain SQL any
 * tool can apply in file-name order), as migrations for `migrate()` of `@holdfast/db/migrate`.
 * With `schema`, the table goes there (created when missing), and the store takes the same
 * `schema`; without, it goes where an unqualified name goes.
 *
 * @example
 * ```ts
 * await migrate(fromPg(pool), [...migrations({ schema: 'holdfast' }), ...yourOwnMigrations]);
 * ```
 */
export function migrations(options: { readonly schema?: string } = {}): Migration[] {
  return sqlMigrations(new URL('../migrations/', import.meta.url), '@holdfast/api-keys', options);
}
