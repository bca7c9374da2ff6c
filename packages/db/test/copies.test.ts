import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { realPostgres } from '@holdfast/pg/testing';
import { build } from 'esbuild';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { fromPg as FromPg } from '../src/pg';

// What an installed tree can hold: two copies of the node-postgres adapter, loaded apart (two
// packages that each bundled it, or two versions), on ONE pool. Named statements live on the
// connection, so the two copies must never give one name to two texts.
const source = fileURLToPath(new URL('../src/pg.ts', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'holdfast-db-copies-'));

async function copy(name: string): Promise<typeof FromPg> {
  const file = join(out, `${name}.mjs`);
  await build({
    entryPoints: [source],
    bundle: true,
    format: 'esm',
    platform: 'node',
    outfile: file,
    logLevel: 'silent',
  });
  const loaded: { fromPg: typeof FromPg } = await import(pathToFileURL(file).href);
  return loaded.fromPg;
}

describe.skipIf(!realPostgres)(
  'two copies of @holdfast/db/pg on one node-postgres pool (needs DATABASE_URL)',
  () => {
    let pool: pg.Pool;
    let first: typeof FromPg;
    let second: typeof FromPg;
    beforeAll(async () => {
      first = await copy('first');
      second = await copy('second');
      // One connection: every statement of both copies runs on it, as a reused pool connection does.
      pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
    });
    afterAll(async () => {
      await pool.end();
      rmSync(out, { recursive: true, force: true });
    });

    it('are two module instances, and their statements run side by side on one connection', async () => {
      expect(first).not.toBe(second);
      const a = first(pool);
      const b = second(pool);
      // Each copy's first statement: a counter in each copy would name both `..._1`.
      expect(await a.query<{ n: number }>('select ($1::int * 2) as n', [4])).toEqual([{ n: 8 }]);
      expect(await b.query<{ n: number }>('select ($1::int * 3) as n', [4])).toEqual([{ n: 12 }]);
      for (let i = 0; i < 3; i += 1) {
        expect(await b.query<{ n: number }>('select ($1::int * 2) as n', [i])).toEqual([{ n: i * 2 }]);
        expect(await a.query<{ n: number }>('select ($1::int * 3) as n', [i])).toEqual([{ n: i * 3 }]);
        expect(await b.query<{ n: number }>(`select ($1::int + ${i}) as n`, [1])).toEqual([{ n: i + 1 }]);
      }
      const { rows } = await pool.query<{ statement: string }>(
        `select statement from pg_prepared_statements where name like 'hf\\_%'`,
      );
      // Each text prepared once, whichever copy ran it first.
      expect(rows.map((row) => row.statement).sort()).toEqual([
        'select ($1::int * 2) as n',
        'select ($1::int * 3) as n',
        'select ($1::int + 0) as n',
        'select ($1::int + 1) as n',
        'select ($1::int + 2) as n',
      ]);
    });
  },
);
