// Type tests: checked by `tsc -p tsconfig.json` (the root typecheck), not run by vitest.
import type { Db } from '@holdfast/db';
import { pgTransaction } from '@holdfast/db/pg';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import type pg from 'pg';
import { expectTypeOf } from 'vitest';
import { type Page, type PageInfo, paginate } from '../src/index';

declare const db: Db;
declare const pool: pg.Pool;
const allowlist = defineSortAllowlist({
  fields: { createdAt: { column: 'created_at', type: 'timestamp' } },
  id: { column: 'id' },
  default: '-createdAt',
});
const keyring = { current: 'k1', keys: { k1: 'x'.repeat(32) } };
const common = { from: 'orders', allowlist, binding: { account: 'acct_1' }, keyring };

// With map, rows are what map returns; without, plain records.
expectTypeOf(paginate(db, { ...common, map: (row) => ({ id: String(row.id) }) })).toEqualTypeOf<
  Promise<Page<{ id: string }>>
>();
expectTypeOf(paginate(db, common)).toEqualTypeOf<Promise<Page<Record<string, unknown>>>>();

// A transaction's Db is accepted.
void pgTransaction(pool)((_client, tx) => paginate(tx, common));

// The scope must name the account.
// @ts-expect-error binding.account is required
void paginate(db, { ...common, binding: { resource: 'orders' } });

// The trusted pieces are text from code, never a driver's fragment.
// @ts-expect-error from is SQL text
void paginate(db, { ...common, from: { text: 'orders' } });

expectTypeOf<PageInfo['nextCursor']>().toEqualTypeOf<string | null>();
