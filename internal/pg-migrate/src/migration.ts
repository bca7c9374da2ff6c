/**
 * One versioned migration: `id` is recorded once `sql` is applied, and never applied again.
 * Packages export theirs as a `migrations` list with ids under their own name
 * (`@holdfast/idempotency/001_keys`); a service's own come from versioned files.
 */
export interface Migration {
  readonly id: string;
  readonly sql: string;
}
