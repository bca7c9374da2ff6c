/**
 * One versioned migration: the one declaration, `Migration` of `@holdfast/db/migrate`.
 * Packages export theirs as a `migrations` list with ids under their own name
 * (`@holdfast/idempotency/001_keys`); a service's own come from versioned files.
 */
export type { Migration } from '@holdfast/db/migrate';
