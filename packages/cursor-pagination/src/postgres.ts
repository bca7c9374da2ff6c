import { problem } from '@holdfast/problem-details';
import { parseSort, type Sort, type SortAllowlist } from '@holdfast/sort-allowlist';
import {
  joinFragments,
  orderByTerm,
  type SortExpression,
  sortExpressions,
} from '@holdfast/sort-allowlist/postgres';
import type postgres from 'postgres';
import type { ISql as Sql } from 'postgres';
import { cursorBinding, decodeCursor, encodeCursor, type FilterValue } from './cursor-codec';
import { cappedTotal, type Page, pageEnvelope, TOTAL_COUNT_CAP, type TotalCount } from './envelope';
import { parseInclude } from './include';
import { checkKeyring, type Keyring } from './keyring';
import { keysetPredicate } from './keyset';
import { clampLimit } from './limit';

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

// Helper columns, removed from the rows handed back: each ORDER BY term as lossless text (what
// the next cursor holds), and each term with its own type (what ORDER BY sorts on).
const HELPER_PREFIX = '_hf_';
const keyName = (index: number) => `${HELPER_PREFIX}key_${index}`;
const sortName = (index: number) => `${HELPER_PREFIX}sort_${index}`;

/** What a sort contributes to the page query: the same for every page of every list using it. */
interface SortShape {
  readonly terms: readonly SortExpression[];
  /** The helper columns: each term as lossless text and as itself. */
  readonly keys: Fragment;
  /** ORDER BY over the helper columns. */
  readonly order: Fragment;
  /** The names of the text helper columns, in term order: what the next cursor holds. */
  readonly keyNames: readonly string[];
  /** Every helper column name, last added first. */
  readonly helpers: readonly string[];
}

// Built fragments per connection object, allowlist and canonical sort. postgres.js fragments
// hold only text, identifiers and constant parameters here (enum ranks), and are re-read, never
// changed, each time a query embeds them; building them costs a dozen Query objects per page.
const SHAPE_CACHE_SIZE = 256;
const shapes = new WeakMap<Sql, WeakMap<SortAllowlist, Map<string, SortShape>>>();

function sortShape(sql: Sql, allowlist: SortAllowlist, sort: Sort): SortShape {
  let byAllowlist = shapes.get(sql);
  if (!byAllowlist) {
    byAllowlist = new WeakMap();
    shapes.set(sql, byAllowlist);
  }
  let bySort = byAllowlist.get(allowlist);
  if (!bySort) {
    bySort = new Map();
    byAllowlist.set(allowlist, bySort);
  }
  let shape = bySort.get(sort.canonical);
  if (shape) return shape;
  const terms = sortExpressions(sql, sort);
  const keys = joinFragments(
    sql,
    terms.flatMap((term, index) => [
      sql`(${term.expression})::text as ${sql(keyName(index))}`,
      sql`${term.expression} as ${sql(sortName(index))}`,
    ]),
    sql`, `,
  );
  // ORDER BY names the helper columns, never a bare column name: a bare name in ORDER BY means
  // an output column first (SQL-92 rule), so `select total::text as total` would silently sort
  // as text while the keyset predicate in WHERE compares the real column. The planner still
  // sees the column itself and uses an index on it.
  const order = joinFragments(
    sql,
    terms.map((term, index) => orderByTerm(sql, { ...term, expression: sql`${sql(sortName(index))}` })),
    sql`, `,
  );
  shape = {
    terms,
    keys,
    order,
    keyNames: terms.map((_, index) => keyName(index)),
    helpers: terms.flatMap((_, index) => [keyName(index), sortName(index)]).reverse(),
  };
  if (bySort.size >= SHAPE_CACHE_SIZE) bySort.clear();
  bySort.set(sort.canonical, shape);
  return shape;
}

function filterConditions(
  sql: Sql,
  columns: Readonly<Record<string, string>>,
  filter: Readonly<Record<string, FilterValue | undefined>>,
): Fragment[] {
  const conditions: Fragment[] = [];
  for (const [name, value] of Object.entries(filter)) {
    if (value === undefined) continue;
    const column = Object.hasOwn(columns, name) ? columns[name] : undefined;
    if (column === undefined) throw new TypeError(`filter "${name}" is not in filterColumns`);
    conditions.push(value === null ? sql`${sql(column)} is null` : sql`${sql(column)} = ${value}`);
  }
  return conditions;
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
  checkKeyring(options.keyring);
  const parsed = parseSort(options.allowlist, options.sort);
  if (!parsed.ok) throw parsed.error;
  const sort = parsed.value;
  const limit = clampLimit(options.limit);
  const include = parseInclude(options.include);
  const filter = options.filter ?? {};
  const base = [
    // Parenthesised: a caller's `a or b` must not absorb the filters and the keyset predicate
    // (`a or b and tenant...` would read as `a or (b and ...)`).
    ...(options.where ? [sql`(${options.where})`] : []),
    ...filterConditions(sql, options.filterColumns ?? {}, filter),
  ];
  const { terms, keys, order, keyNames, helpers } = sortShape(sql, options.allowlist, sort);
  const binding = await cursorBinding({ sort: sort.canonical, filter, scope: options.binding });

  const conditions = [...base];
  if (options.cursor !== undefined && options.cursor !== null) {
    const decoded = await decodeCursor(options.keyring, options.cursor, { binding, size: terms.length });
    if (!decoded.ok) throw decoded.error;
    conditions.push(keysetPredicate(sql, terms, decoded.value.values));
  }

  const where = conditions.length > 0 ? joinFragments(sql, conditions, sql` and `) : sql`true`;
  const select = options.select ?? sql`*`;
  // One row more than the limit tells whether another page exists.
  const pageQuery = sql`select ${select}, ${keys} from ${options.from} where ${where} order by ${order} limit ${limit + 1}`;
  const countQuery = include.total
    ? sql<{ count: number }[]>`select count(*)::int as count from (select 1 from ${options.from}
        where ${base.length > 0 ? joinFragments(sql, base, sql` and `) : sql`true`}
        limit ${TOTAL_COUNT_CAP + 1}) as capped`
    : undefined;
  const [rows, counted] = await Promise.all([pageQuery, countQuery]);

  const hasMore = rows.length > limit;
  const size = Math.min(rows.length, limit);
  const last = size > 0 ? rows[size - 1] : undefined;
  const lastValues = last ? keyNames.map((name) => (typeof last[name] === 'string' ? last[name] : null)) : [];
  // The helper columns come last in every row (`select <list>, <helpers>`); deleting them last
  // first undoes the property additions, so the rows stay fast objects and need no copying.
  const data: (T | Row)[] = new Array(size);
  for (let r = 0; r < size; r += 1) {
    const row = rows[r] as Row;
    for (const helper of helpers) delete row[helper];
    data[r] = options.map ? options.map(row) : row;
  }
  let nextCursor: string | null = null;
  if (hasMore) {
    if (lastValues[lastValues.length - 1] == null) {
      throw problem('internal_error', {
        detail: 'The id tiebreaker column is NULL; it must be unique and not null.',
      });
    }
    nextCursor = await encodeCursor(options.keyring, { binding, values: lastValues });
  }
  const total: TotalCount | undefined = counted ? cappedTotal(counted[0]?.count ?? 0) : undefined;
  return pageEnvelope(data, { nextCursor, hasMore, total });
}
