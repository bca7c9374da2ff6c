import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineSortAllowlist, parseSort, type ResolvedSortField, type Sort } from '../src/index';
import { orderBy } from '../src/order-by';

const items = defineSortAllowlist({
  fields: {
    createdAt: { column: 'created_at', type: 'timestamp' },
    total: { column: 'total', type: 'number', nullable: true },
    status: { column: 'status', type: 'enum', rank: ['pending', 'shipped', 'cancelled'] },
    name: { column: 'name', type: 'text', nullable: true },
    nameCi: { column: 'name', type: 'text', caseInsensitive: true, nullable: true },
    early: { column: 'total', type: 'number', nullable: true, nulls: 'first' },
  },
  id: { column: 'id' },
  default: '-createdAt',
});

function sortOf(raw: string): Sort {
  const result = parseSort(items, raw);
  if (!result.ok) throw result.error;
  return result.value;
}

describe('orderBy on PostgreSQL (SPEC section 4, sorting rules)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.sql`create table items (
      id text primary key, created_at timestamptz(3) not null, total bigint, status text, name text)`;
    await db.sql`insert into items ${db.sql([
      { id: 'a', created_at: '2026-01-01T00:00:00.001Z', total: '9', status: 'cancelled', name: 'b' },
      { id: 'b', created_at: '2026-01-01T00:00:00.001Z', total: '10', status: 'pending', name: 'B' },
      { id: 'c', created_at: '2026-01-01T00:00:00.002Z', total: null, status: 'shipped', name: 'a' },
      {
        id: 'd',
        created_at: '2026-01-01T00:00:00.000Z',
        total: '-9223372036854775808',
        status: null,
        name: null,
      },
      {
        id: 'e',
        created_at: '2026-01-01T00:00:00.002Z',
        total: '9223372036854775807',
        status: 'pending',
        name: 'A',
      },
    ])}`;
  });
  afterAll(async () => {
    await db.close();
  });

  async function ids(raw: string): Promise<string> {
    const rows = await db.sql.unsafe<{ id: string }[]>(
      `select id from items order by ${orderBy(sortOf(raw))}`,
    );
    return rows.map((row) => row.id).join('');
  }

  it.each([
    // Rule 6: id is the final tiebreaker, descending (a and b tie on createdAt, so do c and e).
    ['-createdAt', 'ecbad'],
    ['createdAt', 'dbaec'],
    // Rule 9: numbers sort as numbers (10 after 9), bigints at both extremes; rule 7: NULLS LAST both ways.
    ['total', 'dabec'],
    ['-total', 'ebadc'],
    ['early', 'cdabe'],
    ['-early', 'cebad'],
    // Rule 8: the business rank pending < shipped < cancelled, not alphabetical; unranked NULL last.
    ['status', 'ebcad'],
    ['-status', 'acebd'],
    // Rule 10: collation C is byte order (upper case first); case-insensitive uses lower().
    ['name', 'ebcad'],
    ['-name', 'acbed'],
    ['nameCi', 'ecbad'],
    ['nameCi,createdAt', 'ecbad'],
    ['-nameCi,total', 'abecd'],
    ['status,-total,createdAt', 'ebcad'],
  ])('sort=%s orders rows %s', async (raw, expected) => {
    expect(await ids(raw)).toBe(expected);
  });

  it('puts every identifier in quotes and writes enum ranks as quoted literals', () => {
    const text = orderBy(sortOf('status,nameCi'));
    expect(text).toBe(
      `array_position(array['pending', 'shipped', 'cancelled']::text[], "status"::text) asc nulls last, ` +
        `lower("name") collate "C" asc nulls last, "id" desc nulls last`,
    );
  });

  it('quotes what code gives it, so a quote in a rank or a column name stays inside its literal', async () => {
    const odd = defineSortAllowlist({
      fields: { kind: { column: 'we"ird', type: 'enum', rank: ["it's", 'plain'] } },
      id: { column: 'id' },
      default: 'kind',
    });
    const parsed = parseSort(odd, 'kind');
    if (!parsed.ok) throw parsed.error;
    const text = orderBy(parsed.value);
    expect(text).toContain(`array['it''s', 'plain']::text[], "we""ird"::text`);
    await db.sql`create table odd_kinds (id text primary key, "we""ird" text)`;
    await db.sql`insert into odd_kinds values ('a', 'plain'), ('b', ${"it's"}), ('c', null)`;
    const rows = await db.sql.unsafe<{ id: string }[]>(`select id from odd_kinds order by ${text}`);
    expect(rows.map((row) => row.id).join('')).toBe('bac');
  });

  // An independent model of the reference ordering, written from the spec's words, against
  // which PostgreSQL's answer to orderBy() is checked on random rows and random sorts.
  interface Row {
    id: string;
    created_at: string;
    total: string | null;
    status: string | null;
    name: string | null;
  }

  function modelValue(row: Row, field: ResolvedSortField): number | bigint | string | null {
    const raw = row[field.column as keyof Row];
    if (raw === null) return null;
    switch (field.type) {
      case 'timestamp':
        return Date.parse(raw);
      case 'number':
        return BigInt(raw);
      case 'enum': {
        const rank = field.rank.indexOf(raw);
        return rank === -1 ? null : rank; // rule 8; a value outside the rank sorts like NULL
      }
      case 'text':
        return field.caseInsensitive ? raw.toLowerCase() : raw; // collation C: code point order
    }
  }

  function modelCompare(sort: Sort, a: Row, b: Row): number {
    for (const key of sort.keys) {
      const x = modelValue(a, key.field);
      const y = modelValue(b, key.field);
      if (x === null && y === null) continue;
      const nullsLast = key.field.nulls === 'last';
      if (x === null) return nullsLast ? 1 : -1; // rule 7: placement independent of direction
      if (y === null) return nullsLast ? -1 : 1;
      const order = x < y ? -1 : x > y ? 1 : 0;
      if (order !== 0) return key.direction === 'asc' ? order : -order;
    }
    return a.id < b.id ? 1 : a.id > b.id ? -1 : 0; // rule 6: id descending
  }

  it('property: ORDER BY agrees with a model of the spec on random rows and sorts', async () => {
    const row = fc.record({
      id: fc.string({
        unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'),
        minLength: 8,
        maxLength: 8,
      }),
      created_at: fc.constantFrom(
        '2026-01-01T00:00:00.000Z',
        '2026-01-01T00:00:00.001Z',
        '1970-01-01T00:00:00.000Z',
      ),
      total: fc.oneof(
        fc.constant(null),
        fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String),
        fc.constantFrom('0', '9', '10'),
      ),
      status: fc.constantFrom(null, 'pending', 'shipped', 'cancelled', 'weird'),
      name: fc.constantFrom(null, 'a', 'A', 'b', 'B', 'ab', 'Ab', ''),
    });
    const sortArbitrary = fc
      .uniqueArray(fc.record({ alias: fc.constantFrom(...items.aliases), desc: fc.boolean() }), {
        minLength: 1,
        maxLength: 3,
        selector: (key) => key.alias,
      })
      .map((keys) => keys.map((key) => (key.desc ? `-${key.alias}` : key.alias)).join(','));
    await db.sql`create table modelled (id text primary key, created_at timestamptz(3) not null, total bigint, status text, name text)`;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(row, { maxLength: 25, selector: (r) => r.id }),
        sortArbitrary,
        async (rows, raw) => {
          await db.sql`delete from modelled`;
          if (rows.length > 0) await db.sql`insert into modelled ${db.sql(rows)}`;
          const sort = sortOf(raw);
          const fromDb = await db.sql.unsafe<{ id: string }[]>(
            `select id from modelled order by ${orderBy(sort)}`,
          );
          const expected = [...rows].sort((a, b) => modelCompare(sort, a, b)).map((r) => r.id);
          expect(fromDb.map((r) => r.id)).toEqual(expected);
        },
      ),
      { numRuns: 100 },
    );
  });
});
