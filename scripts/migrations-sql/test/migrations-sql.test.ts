import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Migration } from '@holdfast/db/migrate';
import { createTestDatabase, type Sql, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageMigrations, writeMigrationFiles } from '../../migrations-sql';

const PACKAGES = fileURLToPath(new URL('../../../packages', import.meta.url));

interface Manifest {
  readonly name: string;
  readonly files?: readonly string[];
  readonly scripts?: Readonly<Record<string, string>>;
}

const manifestOf = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(PACKAGES, dir, 'package.json'), 'utf8'));

/** Every package with a `/postgres` entry exporting a non-empty `migrations` list. */
async function packagesWithMigrations(): Promise<
  { dir: string; name: string; list: readonly Migration[] }[]
> {
  const found = [];
  for (const dir of readdirSync(PACKAGES).sort()) {
    if (!existsSync(join(PACKAGES, dir, 'src/postgres.ts'))) continue;
    const list = await packageMigrations(join(PACKAGES, dir));
    if (list.length > 0) found.push({ dir, name: manifestOf(dir).name, list });
  }
  return found;
}

/** The file name an id gets: its last segment when numbered, else numbered by its place. */
function expectedName(id: string, index: number): string {
  const last = id.split('/').pop() ?? id;
  return /^\d{3}_/.test(last)
    ? `${last}.sql`
    : `${String(index + 1).padStart(3, '0')}_${last.replace(/[^a-z0-9_]/g, '_')}.sql`;
}

const withPackages = await packagesWithMigrations();
const out = mkdtempSync(join(tmpdir(), 'holdfast-migrations-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('migrations-sql: the .sql files written at pack time are the migrations list', () => {
  it('finds the packages with tables, and each ships migrations/ and writes it at prepack', () => {
    // The packages whose tables are still a list in code; api-keys and idempotency keep their
    // migrations/*.sql files in git instead (nothing written at pack time).
    expect(withPackages.map((pkg) => pkg.name)).toEqual(
      expect.arrayContaining(['@holdfast/webhook-delivery', '@holdfast/webhook-verifier']),
    );
    for (const { dir } of withPackages) {
      const manifest = manifestOf(dir);
      expect(manifest.files, manifest.name).toContain('migrations');
      expect(manifest.scripts?.prepack, manifest.name).toContain('scripts/migrations-sql.ts');
    }
    // And no package ships a migrations/ directory it has no list for.
    for (const dir of readdirSync(PACKAGES)) {
      if (!existsSync(join(PACKAGES, dir, 'package.json'))) continue;
      const manifest = manifestOf(dir);
      if (manifest.files?.includes('migrations') && existsSync(join(PACKAGES, dir, 'src/postgres.ts')))
        expect(
          withPackages.map((pkg) => pkg.dir),
          manifest.name,
        ).toContain(dir);
    }
  });

  it.each(withPackages.map((pkg) => [pkg.name, pkg] as const))(
    '%s: one file per migration, named NNN_name from its id, in list order, with its SQL unchanged',
    (_, { dir, list }) => {
      const target = join(out, dir);
      writeMigrationFiles(list, target);
      // File-name order, the order every tool applies them in.
      const names = readdirSync(target).sort();
      expect(names).toEqual(list.map((migration, index) => expectedName(migration.id, index)));
      names.forEach((name, index) => {
        const migration = list[index];
        if (migration === undefined) throw new Error(`no migration for ${name}`);
        const [header, ...rest] = readFileSync(join(target, name), 'utf8').split('\n');
        expect(header).toBe(`-- ${migration.id}: apply once, in file-name order.`);
        expect(rest.join('\n').trim()).toBe(migration.sql.trim());
      });
    },
  );
});

describe('migrations-sql: the files applied as plain SQL, in file-name order, make the same tables', () => {
  let db: TestDatabase;
  const schemas: string[] = [];
  beforeAll(async () => {
    db = await createTestDatabase({ max: 1 });
  });
  afterAll(async () => {
    for (const schema of schemas) await db.sql.unsafe(`drop schema if exists ${schema} cascade`);
    await db.close();
  });

  async function applyIn(schema: string, statements: readonly string[]): Promise<void> {
    schemas.push(schema);
    await db.sql.unsafe(`create schema ${schema}`);
    for (const text of statements) {
      // Each file on its own, as a migration tool runs it (one transaction per file).
      await db.sql.begin(async (tx) => {
        await tx.unsafe(`set local search_path to ${schema}`);
        await tx.unsafe(text);
      });
    }
  }

  /** The tables, columns, constraints, indexes, functions and triggers of `schema`, its name masked. */
  async function catalog(sql: Sql, schema: string) {
    const mask = (text: string) => text.replaceAll(schema, '<schema>');
    const columns = await sql`
      select table_name, column_name, data_type, is_nullable, column_default
      from information_schema.columns where table_schema = ${schema}
      order by table_name, column_name`;
    const constraints = await sql<{ conname: string; def: string }[]>`
      select conname, pg_get_constraintdef(oid) as def from pg_constraint
      where connamespace = ${schema}::regnamespace order by conname`;
    const indexes = await sql<{ indexname: string; indexdef: string }[]>`
      select indexname, indexdef from pg_indexes where schemaname = ${schema} order by indexname`;
    const functions = await sql<{ proname: string; prosrc: string }[]>`
      select proname, prosrc from pg_proc where pronamespace = ${schema}::regnamespace order by proname`;
    const triggers = await sql`
      select t.tgname, c.relname from pg_trigger t join pg_class c on c.oid = t.tgrelid
      where c.relnamespace = ${schema}::regnamespace and not t.tgisinternal order by t.tgname`;
    return {
      columns: [...columns],
      constraints: constraints.map((row) => ({ ...row, def: mask(row.def) })),
      indexes: indexes.map((row) => ({ ...row, indexdef: mask(row.indexdef) })),
      functions: functions.map((row) => ({ ...row, prosrc: mask(row.prosrc) })),
      triggers: [...triggers],
    };
  }

  it.each(withPackages.map((pkg) => [pkg.name, pkg] as const))('%s', async (_, { dir, list }) => {
    const target = join(out, `${dir}-applied`);
    writeMigrationFiles(list, target);
    const files = readdirSync(target)
      .sort()
      .map((name) => readFileSync(join(target, name), 'utf8'));
    const suffix = randomBytes(4).toString('hex');
    const fromFiles = `m_files_${suffix}`;
    const fromList = `m_list_${suffix}`;
    await applyIn(fromFiles, files);
    await applyIn(
      fromList,
      list.map((migration) => migration.sql),
    );
    const made = await catalog(db.sql, fromFiles);
    expect(made.columns.length).toBeGreaterThan(0);
    expect(made).toEqual(await catalog(db.sql, fromList));
  });
});
