import { migrate } from '@holdfast/db/migrate';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase } from '@holdfast/pg/testing';
import { expect, it } from 'vitest';
import { allMigrations, serverMigrations } from '../src/db';

// The runner itself (advisory lock, checksums, ids never re-applied) is tested in @holdfast/db.
// Here: the server's own migrations create and change only the server's own tables, so every
// package table stays exactly as its package's migrations left it.

/** Every table, index, column and constraint of the schema, as `kind name: definition` lines. */
const CATALOG = `
  select 'table ' || c.relname as line, c.relname as owner from pg_class c
    where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p')
  union all
  select 'index ' || i.indexname || ': ' || i.indexdef, i.tablename from pg_indexes i
    where i.schemaname = current_schema()
  union all
  select 'column ' || a.attrelid::regclass::text || '.' || a.attname || ': ' || format_type(a.atttypid, a.atttypmod)
      || case when a.attnotnull then ' not null' else '' end
      || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), ''),
    c.relname
    from pg_attribute a
    join pg_class c on c.oid = a.attrelid
    left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p')
      and a.attnum > 0 and not a.attisdropped
  union all
  select 'constraint ' || n.conname || ': ' || pg_get_constraintdef(n.oid), c.relname
    from pg_constraint n join pg_class c on c.oid = n.conrelid
    where c.relnamespace = current_schema()::regnamespace
  union all
  select 'trigger ' || t.tgname, c.relname
    from pg_trigger t join pg_class c on c.oid = t.tgrelid
    where c.relnamespace = current_schema()::regnamespace and not t.tgisinternal
  order by 1`;

it("the server's migrations touch only the server's own tables", async () => {
  const db = await createTestDatabase({ max: 1 });
  try {
    const own = await serverMigrations();
    const all = await allMigrations();
    const ownIds = new Set(own.map((migration) => migration.id));
    const packages = all.filter((migration) => !ownIds.has(migration.id));
    expect(own.length).toBeGreaterThan(0);
    expect(packages.length).toBe(all.length - own.length);

    const pg = fromPostgres(db.sql);
    await migrate(pg, packages);
    const before = await pg.query<{ line: string; owner: string }>(CATALOG);
    const packageTables = new Set(before.map((row) => row.owner));
    expect(packageTables.size).toBeGreaterThan(0);

    expect(await migrate(pg, all)).toEqual(own.map((migration) => migration.id));
    const after = await pg.query<{ line: string; owner: string }>(CATALOG);
    // Every package table's catalog lines, unchanged: nothing added, altered or dropped.
    const ofPackages = (rows: { line: string; owner: string }[]) =>
      rows
        .filter((row) => packageTables.has(row.owner) && row.owner !== 'holdfast_migrations')
        .map((row) => row.line);
    expect(ofPackages(after)).toEqual(ofPackages(before));
    // And what the server added is its own tables only, each named in its migrations' text.
    const added = [...new Set(after.map((row) => row.owner))].filter((owner) => !packageTables.has(owner));
    expect(added.length).toBeGreaterThan(0);
    const text = own.map((migration) => migration.sql).join('\n');
    for (const table of added) expect(text).toContain(`create table if not exists ${table} (`);
  } finally {
    await db.close();
  }
});
