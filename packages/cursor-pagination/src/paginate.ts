import type { Db } from '@holdfast/db';
import type { SortAllowlist } from '@holdfast/sort-allowlist';
import type { FilterValue } from './cursor-codec';
import type { Page } from './envelope';
import type { Keyring } from './keyring';
import { planPage } from './page';
import { Hole, raw, type TextCondition, toText } from './statement';

/** A trusted condition written in code, with its own `$1..$n` values: `{ text: 'account_id = $1', values: [account] }`. */
export interface DbCondition {
  readonly text: string;
  readonly values?: readonly unknown[];
}

type Row = Record<string, unknown>;

/** Everything `paginate` over a {@link Db} needs: trusted SQL text from code, raw strings from the request. */
export interface DbPaginateOptions {
  /** The table or subquery, written in code: `'orders'`. Never client text. */
  readonly from: string;
  /** A trusted condition written in code, typically the tenant. */
  readonly where?: DbCondition | undefined;
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
}

/** {@link DbPaginateOptions} with a row mapper. */
export interface DbPaginateMapOptions<T> extends DbPaginateOptions {
  /** Turns a row (sort-key helper columns removed) into the API representation. */
  readonly map: (row: Row) => T;
}

/**
 * `paginate` on any driver: the same keyset page as `paginate` of
 * `@holdfast/cursor-pagination/postgres` (sort against the allowlist, clamped limit, signed
 * cursor bound to sort, filters and scope, `limit + 1` rows in a total order, `include=total`),
 * built as text with `$1..$n` values and run through `db` (the pool, or the caller's
 * transaction: `fromPg(client)`, `fromDrizzle(tx, sql)`, `fromKysely(trx)`, `fromPrisma(tx)`).
 * Only identifiers from the allowlist and `filterColumns`, and the trusted `from`, `where` and
 * `select` text from code, reach the SQL; every client value is a parameter. Client input that
 * is wrong throws a 400 `ProblemError`.
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
export async function paginate<T>(db: Db, options: DbPaginateMapOptions<T>): Promise<Page<T>>;
export async function paginate(db: Db, options: DbPaginateOptions): Promise<Page<Row>>;
export async function paginate<T>(
  db: Db,
  options: DbPaginateOptions & { readonly map?: (row: Row) => T },
): Promise<Page<T | Row>> {
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
  return plan.finish(rows, total, options.map);
}
