import { type Migration, sqlMigrations } from '@holdfast/db/migrate';

/**
 * The receiver toolkit's tables as versioned migrations, oldest first: the plain SQL files of
 * the package's `migrations/` directory (`001_dedup_and_versions.sql`: accepted ids and the
 * newest version per resource; `002_inbox.sql`: the durable inbox; `003_inbox_by_tenant.sql`:
 * its indexes per tenant; `004_inbox_partitions.sql`: the inbox in daily partitions by received
 * time, which `maintainInbox` makes ahead and drops past retention), ids
 * `@holdfast/webhook-verifier/NNN_name`. Apply them with
 * `migrate` of `@holdfast/db/migrate`, or the files with your own tool, in file-name order.
 * `schema` puts the tables in that schema (created when missing); give the stores and the
 * inbox the same `schema`.
 *
 * @example
 * ```ts
 * await migrate(fromPg(pool), migrations({ schema: 'webhooks' }));
 * const inbox = postgresInbox(fromPg(pool), { schema: 'webhooks' });
 * ```
 */
export function migrations(options: { schema?: string } = {}): Migration[] {
  return sqlMigrations(new URL('../migrations/', import.meta.url), '@holdfast/webhook-verifier', options);
}
