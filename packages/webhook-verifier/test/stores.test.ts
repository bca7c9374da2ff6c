import { randomBytes } from 'node:crypto';
import { migrate } from '@holdfast/db/migrate';
import { fromPg } from '@holdfast/db/pg';
import { fromPostgres } from '@holdfast/db/postgres';
import { childDatabaseUrl, createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations, postgresDedupStore, postgresVersionStore } from '../src/postgres';
import { type DedupStore, memoryDedupStore, memoryVersionStore, type VersionStore } from '../src/receiver';
import { versionOf } from '../src/versions';

let db: TestDatabase;
let pool: pg.Pool | undefined;
let clock = 1_700_000_000_000;
const now = () => clock;
// The tables a second time, in a schema of their own that no search_path names.
const schema = `hf_verifier_${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  db = await createTestDatabase();
  await migrate(fromPostgres(db.sql), migrations());
  await migrate(fromPostgres(db.sql), migrations({ schema }));
  if (realPostgres) pool = new pg.Pool({ connectionString: childDatabaseUrl(db), max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await db?.sql.unsafe(`drop schema if exists "${schema}" cascade`);
  await db?.close();
});

// The same statements on each driver (node-postgres needs a server to connect to).
const onPg = realPostgres ? [['node-postgres', () => fromPg(pool as pg.Pool)] as const] : [];
const dbs = [['postgres.js', () => fromPostgres(db.sql)] as const, ...onPg];
const dedupStores: [string, () => DedupStore][] = [
  ['memory', () => memoryDedupStore({ now })],
  ...dbs.map(([name, of]): [string, () => DedupStore] => [name, () => postgresDedupStore(of(), { now })]),
  [`postgres.js, schema`, () => postgresDedupStore(fromPostgres(db.sql), { now, schema })],
];
const versionStores: [string, () => VersionStore][] = [
  ['memory', () => memoryVersionStore()],
  ...dbs.map(([name, of]): [string, () => VersionStore] => [name, () => postgresVersionStore(of())]),
  [`postgres.js, schema`, () => postgresVersionStore(fromPostgres(db.sql), { schema })],
];

it('the schema option writes to that schema alone', async () => {
  expect(
    await postgresDedupStore(fromPostgres(db.sql), { now, schema }).claim('only-there', clock + 1000),
  ).toBe(true);
  const [there] = await db.sql.unsafe(
    `select count(*)::int as n from "${schema}".holdfast_webhook_dedup where key = 'only-there'`,
  );
  const [here] = await db.sql`select count(*)::int as n from holdfast_webhook_dedup where key = 'only-there'`;
  expect([there?.n, here?.n]).toEqual([1, 0]);
});

describe.each(dedupStores)('%s dedup store', (name, make) => {
  it('claims an id once until it expires, then again', async () => {
    const store = make();
    const key = `${name}:evt_1`;
    expect(await store.claim(key, clock + 1000)).toBe(true);
    expect(await store.claim(key, clock + 1000)).toBe(false);
    clock += 1000;
    expect(await store.claim(key, clock + 1000)).toBe(true);
    expect(await store.claim(key, clock + 1000)).toBe(false);
  });

  it('release forgets a claim; purge drops expired records only', async () => {
    const store = make();
    expect(await store.claim(`${name}:r`, clock + 1000)).toBe(true);
    await store.release(`${name}:r`);
    expect(await store.claim(`${name}:r`, clock + 1000)).toBe(true);
    await store.claim(`${name}:old`, clock + 10);
    await store.claim(`${name}:new`, clock + 10_000);
    expect(await store.purge(clock + 100)).toBeGreaterThanOrEqual(1);
    expect(await store.claim(`${name}:new`, clock + 10_000)).toBe(false);
    expect(await store.claim(`${name}:old`, clock + 10_000)).toBe(true);
  });

  it('concurrent claims of one id: exactly one wins', async () => {
    const store = make();
    const results = await Promise.all(
      Array.from({ length: 8 }, () => store.claim(`${name}:race`, clock + 1000)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('property: a sequence of claims matches a model', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 12 }),
        async (ids) => {
          const store = make();
          const prefix = `${name}:p${n++}:`;
          const seen = new Set<string>();
          for (const id of ids) {
            expect(await store.claim(prefix + id, clock + 60_000)).toBe(!seen.has(id));
            seen.add(id);
          }
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe.each(versionStores)('%s version store', (name, make) => {
  it('advances only on strictly newer versions, per resource', async () => {
    const store = make();
    expect(await store.advance(`${name}:sub_1`, 5)).toBe(true);
    expect(await store.advance(`${name}:sub_1`, 4)).toBe(false);
    expect(await store.advance(`${name}:sub_1`, 5)).toBe(false);
    expect(await store.advance(`${name}:sub_2`, 1)).toBe(true);
    expect(await store.advance(`${name}:sub_1`, versionOf('2026-11-22T18:00:00.000Z'))).toBe(true);
    expect(await store.advance(`${name}:sub_1`, versionOf(new Date('2026-11-22T17:59:59.999Z')))).toBe(false);
  });

  it('property: accepts exactly the running maxima of any arrival order', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat({ max: 1e12 }), { minLength: 1, maxLength: 10 }), async (versions) => {
        const store = make();
        const resource = `${name}:q${n++}`;
        let max = -1;
        for (const v of versions) {
          expect(await store.advance(resource, v)).toBe(v > max);
          max = Math.max(max, v);
        }
      }),
      { numRuns: 50 },
    );
  });
});

it('versionOf refuses what is not a version', () => {
  expect(versionOf(3)).toBe(3);
  expect(() => versionOf('yesterday')).toThrow(TypeError);
  expect(() => versionOf(-1)).toThrow(TypeError);
  expect(() => versionOf(1.5)).toThrow(TypeError);
});

describe.skipIf(!realPostgres)(
  'postgres dedup across pools (needs DATABASE_URL: several connections)',
  () => {
    it('two pools racing for one id: exactly one claim wins', async () => {
      const other = await db.connectAgain(4);
      try {
        const a = postgresDedupStore(fromPostgres(db.sql), { now });
        const b = postgresDedupStore(fromPostgres(other.sql), { now });
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).claim('pools:race', clock + 1000)),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
      } finally {
        await other.close();
      }
    });
  },
);
