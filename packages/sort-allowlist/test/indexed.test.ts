import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acceptedSorts, defineSortAllowlist, parseSort, sortParameter } from '../src/index';

const fields = {
  createdAt: { column: 'created_at', type: 'timestamp', fineGrained: true },
  total: { column: 'total', type: 'number' },
  status: { column: 'status', type: 'enum', rank: ['pending', 'shipped', 'cancelled'] },
} as const;

// createdAt is fine-grained, total and status are not: a sort is served by an indexed sort
// equal to it, or by an indexed prefix of it that ends with createdAt.
const orders = defineSortAllowlist({
  fields,
  id: { column: 'id' },
  default: '-createdAt',
  indexed: ['-createdAt', 'createdAt', 'total', '-total', 'status', 'status,-createdAt'],
});

const everything = defineSortAllowlist({ fields, id: { column: 'id' }, default: '-createdAt' });

/** The rule, written plainly: equal to an indexed sort, or extends one ending with createdAt. */
function served(sort: string): boolean {
  const indexed = orders.indexed ?? [];
  if (indexed.includes(sort)) return true;
  const keys = sort.split(',');
  return keys.some(
    (_, end) =>
      end > 0 &&
      end < keys.length &&
      indexed.includes(keys.slice(0, end).join(',')) &&
      keys[end - 1]?.replace(/^-/, '') === 'createdAt',
  );
}

describe('indexed: only the sorts an index serves are accepted', () => {
  it('accepts the indexed sorts and their extensions past a fine-grained key', () => {
    for (const sort of [
      'status',
      'status,-createdAt',
      'status,-createdAt,total',
      '-createdAt,status,total',
    ]) {
      const result = parseSort(orders, sort);
      expect(result.ok, sort).toBe(true);
    }
  });

  it('refuses any other order with 400 invalid_sort, saying no index serves it', () => {
    for (const sort of ['-status', 'total,status', 'status,createdAt', 'status,total']) {
      const result = parseSort(orders, sort);
      expect(result.ok, sort).toBe(false);
      if (result.ok) continue;
      expect(result.error.status).toBe(400);
      expect(result.error.code).toBe('invalid_sort');
      expect(result.error.detail).toContain(`No index serves the order "${sort}"`);
      expect(result.error.errors).toEqual([
        { field: 'sort', code: 'invalid_sort', detail: result.error.detail },
      ]);
    }
  });

  it('property: parseSort accepts a valid sort exactly when an indexed sort serves it', () => {
    const all = acceptedSorts(everything);
    fc.assert(
      fc.property(fc.constantFrom(...all), (sort) => {
        expect(parseSort(orders, sort).ok).toBe(served(sort));
        expect(acceptedSorts(orders).includes(sort)).toBe(served(sort));
      }),
    );
  });

  it('other mistakes keep their own answers', () => {
    const four = parseSort(orders, 'a,b,c,d');
    expect(four.ok || four.error.code).toBe('too_many_sort_keys');
    const unknown = parseSort(orders, 'colour');
    expect(unknown.ok || unknown.error.detail).toContain('Unknown sort key "colour"');
  });

  it('without indexed every combination of up to three keys is accepted (78 for three fields)', () => {
    const all = acceptedSorts(everything);
    expect(all).toHaveLength(78);
    expect(new Set(all).size).toBe(78);
    for (const sort of all) expect(parseSort(everything, sort).ok).toBe(true);
    expect(everything.indexed).toBeUndefined();
  });

  it('the OpenAPI description and x-sort-indexed name the indexed sorts', () => {
    const parameter = sortParameter(orders);
    expect(parameter.schema['x-sort-indexed']).toEqual(orders.indexed);
    expect(parameter.description).toContain('`status,-createdAt`');
    expect(parameter.description).toContain('no index serves that order');
    expect(parameter.description).toContain(
      'any longer sort that starts with one of them ending in `createdAt`',
    );
    expect(sortParameter(everything).schema).not.toHaveProperty('x-sort-indexed');
  });

  it('refuses a declaration that cannot hold', () => {
    const base = { fields, id: { column: 'id' }, default: '-createdAt' } as const;
    expect(() => defineSortAllowlist({ ...base, indexed: [] })).toThrow(TypeError);
    expect(() =>
      defineSortAllowlist({ ...base, indexed: ['-createdAt', 'total', 'status', 'colour'] }),
    ).toThrow(/indexed sort "colour" is invalid/);
    expect(() =>
      defineSortAllowlist({ ...base, indexed: ['-createdAt', 'total', 'status', '-createdAt'] }),
    ).toThrow(/listed twice/);
    expect(() => defineSortAllowlist({ ...base, indexed: ['createdAt', 'total', 'status'] })).toThrow(
      /default sort "-createdAt"/,
    );
    expect(() => defineSortAllowlist({ ...base, indexed: ['-createdAt', 'total'] })).toThrow(
      /sort alias "status" appears in no indexed sort/,
    );
  });
});
