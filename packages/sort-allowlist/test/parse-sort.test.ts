import { isProblemError } from '@holdfast/problem-details';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defineSortAllowlist, parseSort } from '../src/index';

const orders = defineSortAllowlist({
  fields: {
    createdAt: { column: 'created_at', type: 'timestamp' },
    total: { column: 'total', type: 'number' },
    status: { column: 'status', type: 'enum', rank: ['pending', 'shipped', 'cancelled'] },
  },
  id: { column: 'id' },
  default: '-createdAt',
});

describe('parseSort: accepted syntax (SPEC section 4, sorting rule 1)', () => {
  it.each([
    [undefined, '-createdAt', [['createdAt', 'desc']]],
    [null, '-createdAt', [['createdAt', 'desc']]],
    ['total', 'total', [['total', 'asc']]],
    ['-total', '-total', [['total', 'desc']]],
    [
      'status,-createdAt',
      'status,-createdAt',
      [
        ['status', 'asc'],
        ['createdAt', 'desc'],
      ],
    ],
    [
      '-status,total,createdAt',
      '-status,total,createdAt',
      [
        ['status', 'desc'],
        ['total', 'asc'],
        ['createdAt', 'asc'],
      ],
    ],
  ])('%j parses to %s', (raw, canonical, keys) => {
    const result = parseSort(orders, raw);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.canonical).toBe(canonical);
    expect(result.value.keys.map((key) => [key.alias, key.direction])).toEqual(keys);
    expect(result.value.tiebreaker).toEqual({ column: 'id' });
  });
});

describe('parseSort: errors (sorting rules 4 and 5, CONTRACT section 4)', () => {
  it.each([
    // raw, code, a fragment the detail must contain
    ['foo', 'invalid_sort', '"foo"'],
    ['-foo', 'invalid_sort', '"foo"'],
    ['createdAt,bogus', 'invalid_sort', '"bogus"'],
    ['CreatedAt', 'invalid_sort', '"CreatedAt"'],
    ['id', 'invalid_sort', '"id"'],
    ['__proto__', 'invalid_sort', '"__proto__"'],
    ['constructor', 'invalid_sort', '"constructor"'],
    [' total', 'invalid_sort', '" total"'],
    ['total,-total', 'invalid_sort', 'repeated'],
    ['total,total', 'invalid_sort', 'repeated'],
    ['', 'invalid_sort', 'empty'],
    ['total,', 'invalid_sort', 'empty'],
    [',total', 'invalid_sort', 'empty'],
    ['total,,status', 'invalid_sort', 'empty'],
    ['-', 'invalid_sort', 'direction'],
    ['--total', 'invalid_sort', 'direction'],
    ['+total', 'invalid_sort', 'direction'],
    ['-+total', 'invalid_sort', 'direction'],
    ['total,status,createdAt,total', 'too_many_sort_keys', 'at most 3'],
    ['a,b,c,d', 'too_many_sort_keys', 'at most 3'],
    [',,,', 'too_many_sort_keys', 'at most 3'],
    ['total,total,total,total', 'too_many_sort_keys', 'at most 3'],
  ])('%j is %s', (raw, code, fragment) => {
    const result = parseSort(orders, raw);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(isProblemError(result.error)).toBe(true);
    expect(result.error.code).toBe(code);
    expect(result.error.status).toBe(400);
    expect(result.error.detail).toContain(fragment);
    expect(result.error.errors.length).toBeGreaterThan(0);
    for (const entry of result.error.errors) expect(entry).toMatchObject({ field: 'sort', code });
  });

  it('reports every bad segment and never echoes more than a bounded prefix', () => {
    const long = 'x'.repeat(10_000);
    const result = parseSort(orders, `${long},--total`);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.errors).toHaveLength(2);
    expect(result.error.detail.length).toBeLessThan(200);
  });

  it('property: any string gives a sort or a 400 problem, never a throw', () => {
    const piece = fc.constantFrom('createdAt', 'total', 'status', '-', '+', ',', 'x', '', ' ', '%2C');
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.array(piece, { maxLength: 12 }).map((parts) => parts.join('')),
        ),
        (raw) => {
          const result = parseSort(orders, raw);
          if (result.ok) {
            expect(result.value.keys.length).toBeGreaterThan(0);
            expect(result.value.keys.length).toBeLessThanOrEqual(3);
            expect(result.value.canonical).toBe(raw);
          } else {
            expect(result.error.status).toBe(400);
            expect(['invalid_sort', 'too_many_sort_keys']).toContain(result.error.code);
            if (raw.split(',').length > 3) expect(result.error.code).toBe('too_many_sort_keys');
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('property: every valid sort of 1 to 3 distinct keys round-trips through its canonical text', () => {
    const key = fc.record({ alias: fc.constantFrom('createdAt', 'total', 'status'), desc: fc.boolean() });
    fc.assert(
      fc.property(fc.uniqueArray(key, { minLength: 1, maxLength: 3, selector: (k) => k.alias }), (keys) => {
        const raw = keys.map((k) => (k.desc ? `-${k.alias}` : k.alias)).join(',');
        const result = parseSort(orders, raw);
        expect(result.ok && result.value.canonical).toBe(raw);
      }),
    );
  });
});

describe('defineSortAllowlist', () => {
  it('resolves defaults: NULLS LAST, collation C, enums nullable', () => {
    const list = defineSortAllowlist({
      fields: {
        name: { column: 'name', type: 'text', caseInsensitive: true },
        status: { column: 'status', type: 'enum', rank: ['a', 'b'] },
        total: { column: 'total', type: 'number', nullable: true, nulls: 'first' },
      },
      id: { column: 'id' },
      default: 'name',
      maxKeys: 2,
    });
    expect(list.fields.name).toMatchObject({ collation: 'C', nulls: 'last', nullable: false });
    expect(list.fields.status).toMatchObject({ nullable: true, nulls: 'last' });
    expect(list.fields.total).toMatchObject({ nullable: true, nulls: 'first' });
    expect(list.maxKeys).toBe(2);
    expect(parseSort(list, 'name,total,status').ok).toBe(false);
  });

  it.each([
    [{ fields: { a: { column: 'a', type: 'number' } }, id: { column: 'id' }, default: 'b' }, /default sort/],
    [{ fields: { a: { column: '', type: 'number' } }, id: { column: 'id' }, default: 'a' }, /column/],
    [{ fields: { 'a-b': { column: 'a', type: 'number' } }, id: { column: 'id' }, default: 'a' }, /alias/],
    [{ fields: { a: { column: 'a', type: 'enum', rank: [] } }, id: { column: 'id' }, default: 'a' }, /rank/],
    [
      { fields: { a: { column: 'a', type: 'enum', rank: ['x', 'x'] } }, id: { column: 'id' }, default: 'a' },
      /rank/,
    ],
    [{ fields: { a: { column: 'a', type: 'number' } }, id: { column: '' }, default: 'a' }, /id/],
    [
      { fields: { a: { column: 'a', type: 'number' } }, id: { column: 'id' }, default: 'a', maxKeys: 4 },
      /maxKeys/,
    ],
    [{ fields: {}, id: { column: 'id' }, default: 'a' }, /at least one/],
  ] as const)('rejects a malformed declaration (%#)', (init, message) => {
    expect(() => defineSortAllowlist(init as never)).toThrow(message);
  });
});
