import type { SortAllowlist } from '@holdfast/sort-allowlist';
import type postgres from 'postgres';
import type { ISql as Sql } from 'postgres';
import type { FilterValue } from './cursor-codec';
import type { Page } from './envelope';
import type { Keyring } from './keyring';
import { planPage } from './page';
import { Hole, toPostgres } from './statement';

export { keysetPredicate } from './keyset';

type Fragment = postgres.Fragment;
type Row = postgres.Row;

/** The scope a cursor is bound to: the account, plus anything else that scopes the list. */
export interface CursorScope {
  readonly account: string;
  readonly [key: string]: string;
}

/** Everything `paginate` needs: trusted fragments from code, raw strings from the request. */
export interface PaginateOptions {
  /** The table or subquery, written in code: sql`orders`. */
  readonly from: Fragment;
  /** A trusted condition written in code, typically the tenant: sql`account_id = ${account}`. */
  readonly where?: Fragment | undefined;
  /** The select list. @defaultValue sql`*` */
  readonly select?: Fragment | undefined;
  /** The resource's sort allowlist. */
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
  /**
   * Equality filters in force, by filter name; `undefined` means absent, `null` matches NULL.
   * Validate the values first (a value the column's type cannot hold fails in PostgreSQL).
   */
  readonly filter?: Readonly<Record<string, FilterValue | undefined>>;
  /** What the cursor is bound to besides sort and filter: `{ account, resource: 'orders' }`. */
  readonly binding: CursorScope;
  /** The cursor signing keys. */
  readonly keyring: Keyring;
}

/** `paginate` options with a row mapper. */
export interface PaginateMapOptions<T> extends PaginateOptions {
  /** Turns a row (sort-key helper columns removed) into the API representation. */
  readonly map: (row: Row) => T;
}

/**
 * One call for a list endpoint on postgres.js: parses `sort` against the allowlist, clamps
 * `limit`, verifies the signed cursor against the sort, filters and scope, runs one keyset
 * query for `limit + 1` rows in a total order (the sort keys, then id descending, NULLS LAST),
 * counts with `include=total`, and returns the `{ data, pageInfo }` envelope with the next
 * signed cursor. Client input that is wrong in any way throws a 400 `ProblemError`
 * (`invalid_sort`, `too_many_sort_keys`, `invalid_cursor`, `validation_failed` for `include`),
 * never a 500. A `TypeError` means the call itself is wrong (a filter missing from
 * `filterColumns`, a bad keyring).
 *
 * @example
 * ```ts
 * const page = await paginate(sql, {
 *   from: sql`orders`,
 *   where: sql`account_id = ${account}`,
 *   allowlist: orderSort,
 *   sort: c.req.query('sort'),
 *   cursor: c.req.query('cursor'),
 *   limit: c.req.query('limit'),
 *   include: c.req.query('include'),
 *   filterColumns: { status: 'status' },
 *   filter: { status: c.req.query('status') },
 *   binding: { account, resource: 'orders' },
 *   keyring,
 *   map: (row) => ({ id: row.id, status: row.status, createdAt: row.created_at.toISOString() }),
 * });
 * return c.json(page);
 * ```
 */
export async function paginate<T>(sql: Sql, options: PaginateMapOptions<T>): Promise<Page<T>>;
export async function paginate(sql: Sql, options: PaginateOptions): Promise<Page<Row>>;
export async function paginate<T>(
  sql: Sql,
  options: PaginateOptions & { readonly map?: (row: Row) => T },
): Promise<Page<T | Row>> {
  const plan = await planPage<Fragment>(options, {
    from: new Hole(options.from),
    where: options.where === undefined ? undefined : new Hole(options.where),
    select: options.select === undefined ? undefined : new Hole(options.select),
  });
  // The statements every driver runs, rendered as postgres.js queries: sent together, pipelined.
  const [rows, counted] = await Promise.all([
    toPostgres(sql, plan.page),
    plan.count === undefined ? undefined : toPostgres<{ count: number }[]>(sql, plan.count),
  ]);
  return plan.finish(rows, counted === undefined ? undefined : (counted[0]?.count ?? 0), options.map);
}
