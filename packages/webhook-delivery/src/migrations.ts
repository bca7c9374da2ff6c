import { readdirSync, readFileSync } from 'node:fs';
import type { Migration } from '@holdfast/db/migrate';

// Stand-in for `sqlMigrations` of `@holdfast/db/migrate` until it lands there: the package's
// `NNN_name.sql` files in order, ids `<prefix>/NNN_name` (`@<schema>` appended when a schema is
// given), each run with the schema created and first on its search_path.
function sqlMigrations(dir: URL, prefix: string, options: { schema?: string } = {}): Migration[] {
  const { schema } = options;
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema))
    throw new TypeError(`schema ${JSON.stringify(schema)} is not a lower-case SQL identifier`);
  return readdirSync(dir)
    .filter((name) => /^\d{3}_[a-z0-9_]+\.sql$/.test(name))
    .sort()
    .map((name) => {
      const sql = readFileSync(new URL(name, dir), 'utf8');
      const id = `${prefix}/${name.slice(0, -'.sql'.length)}`;
      if (schema === undefined) return { id, sql };
      return {
        id: `${id}@${schema}`,
        sql: `create schema if not exists "${schema}";\nset local search_path to "${schema}";\n${sql}`,
      };
    });
}

/**
 * The sender's migrations, in apply order, read from the package's `migrations/NNN_name.sql`
 * files (plain SQL, also shipped in the tarball for any other migration tool): the tables and
 * indexes (`001_schema`), endpoints' filters (`002_endpoint_filter`), ordered delivery
 * (`003_ordering`), the indexes of lists sorted by status (`004_status_sorts`), and the functions
 * the hot statements call (`005_functions`). Ids are `@holdfast/webhook-delivery/NNN_name`.
 * `schema` puts every table in that schema (created when missing); give the same `schema` to
 * every function of the package and to the worker.
 *
 * @example
 * ```ts
 * import { migrate } from '@holdfast/db/migrate';
 * await migrate(fromPg(pool), migrations({ schema: 'webhooks' }));
 * ```
 */
export function migrations(options: { schema?: string } = {}): Migration[] {
  return sqlMigrations(new URL('../migrations/', import.meta.url), '@holdfast/webhook-delivery', options);
}
