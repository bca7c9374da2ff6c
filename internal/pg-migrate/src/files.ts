/** The loader of `@holdfast/db/migrate`: `migrations/NNN_name.sql` files, in name order. */
export { type ReadMigrationsOptions, readMigrations } from '@holdfast/db/migrate';
