import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineSortAllowlist, parseSort, type Sort } from '../src/index';
import { orderBy } from '../src/postgres';

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
    const rows = await db.sql<
      { id: string }[]
    >`select id from items order by ${orderBy(db.sql, sortOf(raw))}`;
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

  it('puts every identifier in quotes and binds enum ranks as parameters', async () => {
    const query = db.sql`select id from items order by ${orderBy(db.sql, sortOf('status,nameCi'))}`;
    const described = await query.describe();
    expect(described.string).toContain(
      'array_position(array[$1, $2, $3]::text[], "status"::text) asc nulls last',
    );
    expect(described.string).toContain('lower("name") collate "C" asc nulls last');
    expect(described.string).toContain('"id" desc nulls last');
  });
});
