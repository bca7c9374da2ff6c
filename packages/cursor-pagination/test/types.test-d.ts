// Type tests: checked by `tsc -p tsconfig.json` (the root typecheck), not run by vitest.
import type { Sql } from '@holdfast/pg';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import { expectTypeOf } from 'vitest';
import type { Page, PageInfo } from '../src/index';
import { paginate } from '../src/postgres';

declare const sql: Sql;
const allowlist = defineSortAllowlist({
  fields: { createdAt: { column: 'created_at', type: 'timestamp' } },
  id: { column: 'id' },
  default: '-createdAt',
});
const keyring = { current: 'k1', keys: { k1: 'x'.repeat(32) } };
const common = { from: sql`orders`, allowlist, binding: { account: 'acct_1' }, keyring };

// With map, rows are what map returns; without, postgres.js rows.
expectTypeOf(paginate(sql, { ...common, map: (row) => ({ id: String(row.id) }) })).toEqualTypeOf<
  Promise<Page<{ id: string }>>
>();
expectTypeOf(paginate(sql, common)).toExtend<Promise<Page<Record<string, unknown>>>>();

// Transactions are accepted.
void sql.begin((tx) => paginate(tx, { ...common, from: tx`orders` }));

// The scope must name the account.
// @ts-expect-error binding.account is required
void paginate(sql, { ...common, binding: { resource: 'orders' } });

expectTypeOf<PageInfo['nextCursor']>().toEqualTypeOf<string | null>();
