import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/index';
import {
  type Migration,
  migrate,
  migrationChecksum,
  qualify,
  readMigrations,
  sqlMigrations,
} from '../src/migrate';
import { fromPostgres } from '../src/postgres';

let database: TestDatabase;
let db: Db;
beforeAll(async () => {
  database = await createTestDatabase();
  db = fromPostgres(database.sql);
});
afterAll(() => database.close());

let runs = 0;
/** A table of applied ids of its own for each case, so the cases never see each other's. */
function fresh(): { table: string } {
  runs += 1;
  return { table: `migrations_${runs}` };
}

const tables = async () =>
  (
    await db.query<{ name: string }>(
      `select table_name as name from information_schema.tables where table_schema = current_schema() and table_name like 'mig\\_%' order by 1`,
    )
  ).map((row) => row.name);

describe('migrate', () => {
  it('applies in order, records id and sha-256, and applies nothing on the next run', async () => {
    const options = fresh();
    const list: Migration[] = [
      { id: '001_a', sql: 'create table mig_a (id int primary key);\ninsert into mig_a values (1), (2);' },
      { id: '002_b', sql: "create table mig_b (note text); insert into mig_b values ('it''s $1 and $$');" },
    ];
    expect(await migrate(db, list, options)).toEqual(['001_a', '002_b']);
    expect(await migrate(db, list, options)).toEqual([]);
    expect(await db.query(`select count(*)::int as n from mig_a`)).toEqual([{ n: 2 }]);
    expect(await db.query(`select note from mig_b`)).toEqual([{ note: "it's $1 and $$" }]);
    const recorded = await db.query<{ id: string; checksum: string }>(
      `select id, checksum from ${options.table} order by id`,
    );
    expect(recorded).toEqual([
      { id: '001_a', checksum: await migrationChecksum(list[0]?.sql ?? '') },
      { id: '002_b', checksum: await migrationChecksum(list[1]?.sql ?? '') },
    ]);
    expect(recorded[0]?.checksum).toMatch(/^[0-9a-f]{64}$/);
    // A later list applies only what is new.
    const more = [...list, { id: '003_c', sql: 'create table mig_c (id int)' }];
    expect(await migrate(db, more, options)).toEqual(['003_c']);
  });

  it('refuses an applied migration whose text changed, before applying anything', async () => {
    const options = fresh();
    await migrate(db, [{ id: '001_d', sql: 'create table mig_d (id int)' }], options);
    await expect(
      migrate(
        db,
        [
          { id: '001_d', sql: 'create table mig_d (id bigint)' },
          { id: '002_e', sql: 'create table mig_e (id int)' },
        ],
        options,
      ),
    ).rejects.toThrow(/001_d changed since \(checksum differs\)/);
    expect(await tables()).not.toContain('mig_e');
  });

  it('leaves nothing of a failing migration and keeps the ones before it', async () => {
    const options = fresh();
    const list: Migration[] = [
      { id: '001_f', sql: 'create table mig_f (id int)' },
      { id: '002_g', sql: 'create table mig_g (id int); select 1 / 0;' },
    ];
    await expect(migrate(db, list, options)).rejects.toMatchObject({ code: '22012' });
    expect(await tables()).toContain('mig_f');
    expect(await tables()).not.toContain('mig_g');
    expect(await db.query(`select id from ${options.table}`)).toEqual([{ id: '001_f' }]);
  });

  it('refuses duplicate or empty ids and options that are no identifier, before touching the database', async () => {
    await expect(
      migrate(db, [
        { id: 'x', sql: 'select 1' },
        { id: 'x', sql: 'select 2' },
      ]),
    ).rejects.toThrow(TypeError);
    await expect(migrate(db, [{ id: '', sql: 'select 1' }])).rejects.toThrow(TypeError);
    await expect(migrate(db, [], { schema: 'a; drop table x' })).rejects.toThrow(TypeError);
  });

  it('keeps its table in the schema it is given, created when missing', async () => {
    const schema = `hf_mig_${Date.now().toString(36)}`;
    try {
      expect(await migrate(db, [{ id: '001_h', sql: 'select 1' }], { schema })).toEqual(['001_h']);
      expect(await db.query(`select id from ${schema}.holdfast_migrations`)).toEqual([{ id: '001_h' }]);
    } finally {
      await db.query(`drop schema if exists ${schema} cascade`);
    }
  });

  it('adopts a table of applied ids written before checksums, recording them', async () => {
    const { table } = fresh();
    await db.query(
      `create table ${table} (id text primary key, applied_at timestamptz(3) not null default now())`,
    );
    await db.query(`insert into ${table} (id) values ('001_i')`);
    const list = [
      { id: '001_i', sql: 'create table mig_i (id int)' },
      { id: '002_j', sql: 'create table mig_j (id int)' },
    ];
    expect(await migrate(db, list, { table })).toEqual(['002_j']);
    expect(await db.query(`select checksum from ${table} where id = '001_i'`)).toEqual([
      { checksum: await migrationChecksum('create table mig_i (id int)') },
    ]);
  });

  it.skipIf(!realPostgres)(
    'applies each migration once when runners start together (needs DATABASE_URL)',
    async () => {
      const options = fresh();
      const list = Array.from({ length: 5 }, (_, i) => ({
        id: `00${i}_race`,
        sql: `create table mig_race_${i} (id int)`,
      }));
      const pools = await Promise.all(Array.from({ length: 4 }, () => database.connectAgain(2)));
      try {
        const results = await Promise.all(
          pools.map((pool) => migrate(fromPostgres(pool.sql), list, options)),
        );
        expect(results.flat().sort()).toEqual(list.map((m) => m.id).sort());
      } finally {
        await Promise.all(pools.map((pool) => pool.close()));
      }
    },
  );
});

describe('readMigrations', () => {
  it('reads NNN_name.sql files in name order, ids after the prefix, other files ignored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'holdfast-migrations-'));
    try {
      writeFileSync(join(dir, '002_second.sql'), 'select 2;\n');
      writeFileSync(join(dir, '001_first.sql'), 'select 1;\n');
      writeFileSync(join(dir, 'README.md'), 'not a migration');
      writeFileSync(join(dir, '3_bad.sql'), 'select 3;\n');
      expect(await readMigrations(dir, { prefix: '@holdfast/x/' })).toEqual([
        { id: '@holdfast/x/001_first', sql: 'select 1;\n' },
        { id: '@holdfast/x/002_second', sql: 'select 2;\n' },
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('migrations in a schema of their own', () => {
  it('creates the schema, puts unqualified names in it, and leaves search_path as it was', async () => {
    const options = fresh();
    // A schema and table of their own each run (the database outlives the run), dropped at the end.
    const suffix = Math.random().toString(36).slice(2, 10);
    const schema = `mig_schema_${suffix}`;
    const table = `mig_in_${suffix}`;
    const before = (await db.query<{ path: string }>(`select current_setting('search_path') as path`))[0]
      ?.path;
    const list: Migration[] = [{ id: '001_in_schema', sql: `create table ${table} (id int);`, schema }];
    try {
      expect(await migrate(db, list, options)).toEqual(['001_in_schema']);
      const where = await db.query<{ schema: string }>(
        'select table_schema as schema from information_schema.tables where table_name = $1',
        [table],
      );
      expect(where.map((row) => row.schema)).toEqual([schema]);
      const after = (await db.query<{ path: string }>(`select current_setting('search_path') as path`))[0]
        ?.path;
      expect(after).toBe(before);
    } finally {
      await db.query(`drop schema if exists ${schema} cascade`);
    }
  });
});

describe('sqlMigrations and qualify', () => {
  it('reads a package directory synchronously, ids after the prefix, the schema in id and field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'holdfast-sql-migrations-'));
    try {
      writeFileSync(join(dir, '002_second.sql'), 'select 2;\n');
      writeFileSync(join(dir, '001_first.sql'), 'select 1;\n');
      writeFileSync(join(dir, 'notes.txt'), 'not a migration');
      const url = pathToFileURL(`${dir}/`);
      expect(sqlMigrations(url, '@acme/x')).toEqual([
        { id: '@acme/x/001_first', sql: 'select 1;\n' },
        { id: '@acme/x/002_second', sql: 'select 2;\n' },
      ]);
      expect(sqlMigrations(url, '@acme/x', { schema: 'billing' }).map((m) => [m.id, m.schema])).toEqual([
        ['@acme/x/001_first@billing', 'billing'],
        ['@acme/x/002_second@billing', 'billing'],
      ]);
      expect(() => sqlMigrations(url, '@acme/x', { schema: 'Bad-Name' })).toThrow(TypeError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('qualifies with a quoted schema, or leaves the bare name', () => {
    expect(qualify()('holdfast_keys')).toBe('holdfast_keys');
    expect(qualify('billing')('holdfast_keys')).toBe('"billing".holdfast_keys');
    expect(() => qualify('x"; drop table y; --')).toThrow(TypeError);
  });
});
