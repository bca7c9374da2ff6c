// Part of `prepack` in a package with tables: writes each entry of its `migrations` list
// (`/postgres`) as a plain SQL file, `migrations/<NNN_name>.sql`, shipped in the tarball beside
// the list, so a team on node-pg-migrate, Prisma Migrate, Drizzle Kit or Flyway applies the same
// tables with its own tool: in file-name order, each once.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

interface Migration {
  readonly id: string;
  readonly sql: string;
}

const dir = process.argv[2] ?? process.cwd();
const module: { migrations?: readonly Migration[] } = await import(
  pathToFileURL(join(dir, 'src/postgres.ts')).href
);
const list = module.migrations ?? [];
if (list.length === 0) throw new Error(`${dir}: src/postgres.ts exports no migrations`);
const out = join(dir, 'migrations');
rmSync(out, { recursive: true, force: true });
mkdirSync(out);
for (const [index, migration] of list.entries()) {
  const last = migration.id.split('/').pop() ?? migration.id;
  // An id without a number (webhook-delivery's `statements-<fingerprint>`, which a release that
  // changes them renames so it applies once more) is numbered by its place in the list.
  const name = /^\d{3}_/.test(last)
    ? last
    : `${String(index + 1).padStart(3, '0')}_${last.replace(/[^a-z0-9_]/g, '_')}`;
  if (!/^\d{3}_[a-z0-9_]+$/.test(name)) throw new Error(`${migration.id}: not an NNN_name id`);
  const body = migration.sql.replace(/^\n+/, '').replace(/\s*$/, '\n');
  writeFileSync(join(out, `${name}.sql`), `-- ${migration.id}: apply once, in file-name order.\n${body}`);
}
console.log(`${dir}: wrote ${list.length} migration file(s) to migrations/`);
