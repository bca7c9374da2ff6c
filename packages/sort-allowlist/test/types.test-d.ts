// Type tests: checked by `tsc -p tsconfig.json` (the root typecheck), not run by vitest.
import type { ProblemError } from '@holdfast/problem-details';
import { expectTypeOf } from 'vitest';
import { defineSortAllowlist, parseSort, type SortAllowlist } from '../src/index';

const orders = defineSortAllowlist({
  fields: {
    createdAt: { column: 'created_at', type: 'timestamp' },
    status: { column: 'status', type: 'enum', rank: ['pending', 'shipped', 'cancelled'] },
  },
  id: { column: 'id' },
  default: '-createdAt',
});

// The aliases are inferred from the declaration.
expectTypeOf(orders.aliases).toEqualTypeOf<readonly ('createdAt' | 'status')[]>();
expectTypeOf(orders).toExtend<SortAllowlist>();

const result = parseSort(orders, 'status');
if (result.ok) {
  expectTypeOf(result.value.keys[0]?.alias).toEqualTypeOf<'createdAt' | 'status' | undefined>();
} else {
  expectTypeOf(result.error).toExtend<ProblemError<'invalid_sort' | 'too_many_sort_keys'>>();
}

// An enum needs its rank; a text collation is a string.
// @ts-expect-error rank is required for enums
defineSortAllowlist({ fields: { s: { column: 's', type: 'enum' } }, id: { column: 'id' }, default: 's' });
// @ts-expect-error unknown field type
defineSortAllowlist({ fields: { s: { column: 's', type: 'json' } }, id: { column: 'id' }, default: 's' });
