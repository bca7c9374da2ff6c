import type { Sql } from '@holdfast/pg/testing';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import fc from 'fast-check';
import type { Keyring } from '../src/index';

/** Every field type, nullability and null placement the allowlist supports. */
export const itemSort = defineSortAllowlist({
  fields: {
    createdAt: { column: 'created_at', type: 'timestamp' },
    updatedAt: { column: 'updated_at', type: 'timestamp', nullable: true },
    total: { column: 'total', type: 'number', nullable: true },
    totalNullsFirst: { column: 'total', type: 'number', nullable: true, nulls: 'first' },
    score: { column: 'score', type: 'number', nullable: true },
    status: { column: 'status', type: 'enum', rank: ['pending', 'shipped', 'cancelled'] },
    name: { column: 'name', type: 'text', caseInsensitive: true, nullable: true },
    label: { column: 'label', type: 'text' },
  },
  id: { column: 'id' },
  default: '-createdAt',
});

export const aliases = itemSort.aliases;

export const keyring: Keyring = {
  current: 'k2',
  keys: { k2: 'cursor-key-two-cursor-key-two-0002', k1: 'cursor-key-one-cursor-key-one-0001' },
};

export async function createItems(sql: Sql): Promise<void> {
  await sql`create table items (
    id text primary key,
    account text not null,
    created_at timestamptz(3) not null,
    updated_at timestamptz,
    total bigint,
    score double precision,
    status text,
    name text,
    label text not null
  )`;
}

export interface Item {
  id: string;
  account: string;
  created_at: string;
  updated_at: string | null;
  total: string | null;
  score: number | null;
  status: string | null;
  name: string | null;
  label: string;
}

// Few distinct values per column, so ties are frequent and every tie-breaking path runs.
const timestamps = [
  '2026-01-01T00:00:00.000Z',
  '2026-01-01T00:00:00.001Z',
  '2026-06-30T23:59:59.999Z',
  '1999-12-31T23:59:59.999Z',
];
const microTimestamps = [
  null,
  '2026-01-01T00:00:00.000001Z',
  '2026-01-01T00:00:00.000002Z',
  '2026-01-01T00:00:00Z',
];
const totals = [
  null,
  '0',
  '-1',
  '1',
  '9007199254740993',
  '-9007199254740993',
  '9223372036854775807',
  '-9223372036854775808',
  '10',
  '9',
];
const scores = [null, 0.1, -0.5, 1e300, -1e-300, 1 / 3, 2];
const statuses = [null, 'pending', 'shipped', 'cancelled'];
const names = [null, 'a', 'A', 'b', 'B', 'ä', '', 'Zed'];
const labels = ['x', 'X', 'y', 'ÿ'];

export function itemArbitrary(idPrefix: string): fc.Arbitrary<Omit<Item, 'id'> & { key: string }> {
  return fc.record({
    key: fc
      .string({ unit: fc.constantFrom('a', 'B', 'c', 'D', '0', '_'), minLength: 1, maxLength: 6 })
      .map((k) => `${idPrefix}${k}`),
    account: fc.constantFrom('acct_a', 'acct_a', 'acct_a', 'acct_b'),
    created_at: fc.constantFrom(...timestamps),
    updated_at: fc.constantFrom(...microTimestamps),
    total: fc.oneof(
      fc.constantFrom(...totals),
      fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String),
    ),
    score: fc.constantFrom(...scores),
    status: fc.constantFrom(...statuses),
    name: fc.constantFrom(...names),
    label: fc.constantFrom(...labels),
  });
}

export function itemsArbitrary(idPrefix: string, maxLength: number): fc.Arbitrary<Item[]> {
  return fc
    .uniqueArray(itemArbitrary(idPrefix), { maxLength, selector: (item) => item.key })
    .map((items) => items.map(({ key, ...rest }) => ({ id: key, ...rest })));
}

/** A fixed pseudo-random table of `count` rows (unique ids), the same on every run. */
export function sampleItems(idPrefix: string, count: number, seed: number): Item[] {
  return fc
    .sample(itemArbitrary(idPrefix), { numRuns: count, seed })
    .map(({ key, ...rest }, index) => ({ id: `${key}_${index}`, ...rest }));
}

/** A random allowed sort of 1 to 3 distinct keys in the `sort` syntax. */
export const sortArbitrary: fc.Arbitrary<string> = fc
  .uniqueArray(fc.record({ alias: fc.constantFrom(...aliases), desc: fc.boolean() }), {
    minLength: 1,
    maxLength: 3,
    selector: (key) => key.alias,
  })
  .map((keys) => keys.map((key) => (key.desc ? `-${key.alias}` : key.alias)).join(','));

export async function insertItems(sql: Sql, items: readonly Item[]): Promise<void> {
  if (items.length === 0) return;
  // Through JSON, so timestamps keep their microseconds (postgres.js sends timestamp
  // parameters through a JavaScript Date, which has milliseconds only).
  await sql`insert into items select * from jsonb_populate_recordset(null::items, ${sql.json(items.map((item) => ({ ...item })))})`;
}
