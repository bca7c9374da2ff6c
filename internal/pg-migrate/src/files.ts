import { readdir, readFile } from 'node:fs/promises';
import type { Migration } from './migration';

/** Options of {@link readMigrations}. */
export interface ReadMigrationsOptions {
  /**
   * Which file names are migrations. @defaultValue `/^\d{3}_[a-z0-9_]+\.sql$/`
   * (`001_accounts.sql`, `100_orders.sql`, ...)
   */
  pattern?: RegExp;
}

/**
 * The versioned SQL files of `directory`, in name order, each as a {@link Migration} whose id
 * is the file name without `.sql`. Name files with a zero-padded number first, so name order
 * is version order, and never rename or edit one that has shipped: add a new file instead.
 *
 * @example
 * ```ts
 * import { migrate } from '@holdfast/pg-migrate';
 * import { readMigrations } from '@holdfast/pg-migrate/files';
 * await migrate(sql, await readMigrations(new URL('../migrations/', import.meta.url)));
 * ```
 */
export async function readMigrations(
  directory: URL | string,
  options: ReadMigrationsOptions = {},
): Promise<Migration[]> {
  const { pattern = /^\d{3}_[a-z0-9_]+\.sql$/ } = options;
  const base = typeof directory === 'string' ? directory.replace(/\/?$/, '/') : directory;
  const names = (await readdir(base)).filter((name) => pattern.test(name)).sort();
  return Promise.all(
    names.map(async (name) => ({
      id: name.replace(/\.sql$/, ''),
      sql: await readFile(typeof base === 'string' ? `${base}${name}` : new URL(name, base), 'utf8'),
    })),
  );
}
