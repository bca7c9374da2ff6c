// Interim copies of `qualify` and `sqlMigrations`, which @holdfast/db/migrate gains on main;
// removed at the merge.
import { readdirSync, readFileSync } from 'node:fs';
import type { Migration } from '@holdfast/db/migrate';

export function qualify(schema?: string): (table: string) => string {
  return (table) => (schema === undefined ? table : `"${schema}".${table}`);
}

export function sqlMigrations(dir: URL, prefix: string, options: { schema?: string } = {}): Migration[] {
  return readdirSync(dir)
    .filter((name) => /^\d{3}_[a-z0-9_]+\.sql$/.test(name))
    .sort()
    .map((name) => ({
      id: `${prefix}/${name.slice(0, -4)}${options.schema === undefined ? '' : `@${options.schema}`}`,
      sql:
        options.schema === undefined
          ? readFileSync(new URL(name, dir), 'utf8')
          : `create schema if not exists "${options.schema}";\nset local search_path to "${options.schema}";\n${readFileSync(new URL(name, dir), 'utf8')};\nreset search_path;`,
    }));
}
