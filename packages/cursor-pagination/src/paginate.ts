import type { Db } from '@holdfast/db';
import type { SortAllowlist } from '@holdfast/sort-allowlist';
import type { FilterValue } from './cursor-codec';
import type { Page } from './envelope';
import type { Keyring } from './keyring';
import { planPage } from './page';
import { Hole, raw, type TextCondition, toText } from './statement';

/** A trusted condition written in code, with its own `$1..$n` values: `{ text: 'account_id = $1', values: [account] }`. */
export interface SqlCondition {
  readonly text: string;
  readonly values?: readonly unknown[];
}

type Row = Record<string, unknown>;

/** Everything {@link paginate} needs: trusted SQL text from code, raw strings from the request. */
export interface PaginateOptions<T = Row> {
  /** The table or subquery, written in code: `'orders'`. Never client text. */
  readonly from: string;
  /** A trusted condition written in code, typically the tenant. */
  readonly where?: SqlCondition | undefined;
  /** The select list, written in code. @defaultValue `'*'` */
  readonly select?: string | undefined;
  readonly allowlist: SortAllowlist;
  /** The raw `sort` query parameter; absent gives the allowlist's default. */
  readonly sort?: string | null | undefined;
  /** The raw `cursor` query parameter; absent gives the first page. */
  readonly cursor?: string | null | undefined;
  /** The raw `limit` query parameter, clamped by `clampLimit`. */
  readonly limit?: string | number | null | undefined;
  /** The raw `include` query parameter (`total`). */
  readonly include?: string | null | undefined;
  /** Filter name to column, the allowlist of equality filters (`{ status: 'status' }`). */
  readonly filterColumns?: Readonly<Record<string, string>>;
  /** Equality filters in force, by filter name; `undefined` means absent, `null` matches NULL. */
  readonly filter?: Readonly<Record<string, FilterValue | undefined>>;
  /** What the cursor is bound to besides sort and filter: `{ account, resource: 'orders' }`. */
  readonly binding: { readonly account: string; readonly [key: string]: string };
  readonly keyring: Keyring;
  /** Turns a row (sort-key helper columns removed) into the API representation. @defaultValue the row as it is */
  readonly map?: ((row: Row) => T) | undefined;
}

/**
 * One call for a list endpoint, on any driver: parses `sort` against the allowlist, clamps
 * `limit`, verifies the signed cursor against the sort, filters and scope, runs one keyset
 * query for `limit + 1` rows or a few more in a total order (the sort keys, then id descending, NULLS LAST),
 * counts with `include=total`, and returns the `{ data, pageInfo }` envelope with the next
 * signed cursor. The statements are text with `$1..$n` values, run through `db` (the pool, or
 * the caller's transaction: `fromPg(pool)`, `fromPostgres(sql)`, `fromDrizzle(tx, sql)`,
 * `fromKysely(trx)`, `fromPrisma(tx)` of `@holdfast/db`).
 * Only identifiers from the allowlist and `filterColumns`, and the trusted `from`, `where` and
 * `select` text from code, reach the SQL; every client value is a parameter. Client input that
 * is wrong in any way throws a 400 `ProblemError` (`invalid_sort`, `too_many_sort_keys`,
 * `invalid_cursor`, `validation_failed` for `include`), never a 500; a `TypeError` means the call
 * itself is wrong (a filter missing from `filterColumns`, a bad keyring).
 *
 * @example
 * ```ts
 * const page = await paginate(fromPg(pool), {
 *   from: 'orders',
 *   where: { text: 'account_id = $1', values: [account] },
 *   allowlist: orderSort,
 *   sort: url.searchParams.get('sort'),
 *   cursor: url.searchParams.get('cursor'),
 *   limit: url.searchParams.get('limit'),
 *   binding: { account, resource: 'orders' },
 *   keyring,
 * });
 * ```
 */
export async function paginate<T = Row>(db: Db, options: PaginateOptions<T>): Promise<Page<T>> {
  const plan = await planPage<TextCondition>(options, {
    from: raw(options.from),
    where: options.where === undefined ? undefined : new Hole(options.where),
    select: options.select === undefined ? undefined : raw(options.select),
  });
  const page = toText(plan.page);
  // One at a time: a transaction's connection runs one statement at a time anyway.
  const rows = await db.query<Row>(page.text, page.values);
  let total: number | undefined;
  if (plan.count !== undefined) {
    const count = toText(plan.count);
    const [counted] = await db.query<{ count: number }>(count.text, count.values);
    total = counted?.count ?? 0;
  }
  // Without `map` the rows are handed back as they are, and T is the row type (its default).
  return (await plan.finish(rows, total, options.map)) as Page<T>;
}
