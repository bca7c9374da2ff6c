// Part of `prepack` in a package with tables: writes each entry of its `migrations` list
// (`/postgres`) as a plain SQL file, `migrations/<NNN_name>.sql`, shipped in the tarball beside
// the list, so a team on node-pg-migrate, Prisma Migrate, Drizzle Kit or Flyway applies the same
// tables with its own tool: in file-name order, each once.
// Usage (from a package directory): tsx --conditions=@holdfast/source ../../scripts/migrations-sql.ts [packageDir]
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Migration } from '@holdfast/db/migrate';

/** One file of `migrations/`: its name (`NNN_name.sql`) and contents. */
export interface MigrationFile {
  readonly name: string;
  readonly contents: string;
}

/**
 * The files for a `migrations` list, in list order: file-name order is the order to apply.
 * Each holds one comment line naming the id, then the migration's SQL as it is (leading blank
 * lines and trailing whitespace dropped).
 */
export function migrationFiles(list: readonly Migration[]): MigrationFile[] {
  return list.map((migration, index) => {
    const last = migration.id.split('/').pop() ?? migration.id;
    // An id without a number (webhook-delivery's `statements-<fingerprint>`, which a release that
    // changes them renames so it applies once more) is numbered by its place in the list.
    const name = /^\d{3}_/.test(last)
      ? last
      : `${String(index + 1).padStart(3, '0')}_${last.replace(/[^a-z0-9_]/g, '_')}`;
    if (!/^\d{3}_[a-z0-9_]+$/.test(name)) throw new Error(`${migration.id}: not an NNN_name id`);
    const body = migration.sql.replace(/^\n+/, '').replace(/\s*$/, '\n');
    return { name: `${name}.sql`, contents: `-- ${migration.id}: apply once, in file-name order.\n${body}` };
  });
}

/** The `migrations` list a package exports from `src/postgres.ts` (empty when it has none). */
export async function packageMigrations(dir: string): Promise<readonly Migration[]> {
  const module: { migrations?: readonly Migration[] } = await import(
    pathToFileURL(join(dir, 'src/postgres.ts')).href
  );
  return module.migrations ?? [];
}

/** Writes the files into `out` (emptied first). */
export function writeMigrationFiles(list: readonly Migration[], out: string): void {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  for (const file of migrationFiles(list)) writeFileSync(join(out, file.name), file.contents);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2] ?? process.cwd();
  const list = await packageMigrations(dir);
  if (list.length === 0) throw new Error(`${dir}: src/postgres.ts exports no migrations`);
  writeMigrationFiles(list, join(dir, 'migrations'));
  console.log(`${dir}: wrote ${list.length} migration file(s) to migrations/`);
}
