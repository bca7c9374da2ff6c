import type { Db } from '@holdfast/db';
import { problem } from '@holdfast/problem-details';
import { parseSort, type ResolvedSortField, type Sort, type SortAllowlist } from '@holdfast/sort-allowlist';
import { cursorBinding, decodeCursor, encodeCursor, type FilterValue } from './cursor-codec';
import { cappedTotal, type Page, pageEnvelope, TOTAL_COUNT_CAP, type TotalCount } from './envelope';
import { parseInclude } from './include';
import { checkKeyring, type Keyring } from './keyring';
import { clampLimit } from './limit';

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

/** Values collected while the statement's text is built: each `add` returns its placeholder. */
class Values {
  readonly list: unknown[] = [];
  add(value: unknown): string {
    this.list.push(value);
    return `$${this.list.length}`;
  }
  /** A caller's condition, its `$n` renumbered after the values already taken. */
  condition(condition: DbCondition): string {
    const offset = this.list.length;
    this.list.push(...(condition.values ?? []));
    return condition.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
  }
}

/** An identifier from code (allowlists, filterColumns), quoted; `a.b` names a column of a table. */
function ident(name: string): string {
  return name
    .split('.')
    .map((part) => `"${part.replaceAll('"', '""')}"`)
    .join('.');
}

interface Term {
  readonly expression: string;
  readonly direction: 'asc' | 'desc';
  readonly nulls: 'first' | 'last';
  readonly nullable: boolean;
  readonly type: ResolvedSortField['type'] | 'id';
}

// The same expressions as sortExpressions in @holdfast/sort-allowlist/postgres, as text.
function expressionOf(field: ResolvedSortField, values: Values): string {
  const column = ident(field.column);
  switch (field.type) {
    case 'number':
    case 'timestamp':
      return column;
    case 'text': {
      const collation = ident(field.collation ?? 'C');
      return field.caseInsensitive
        ? `lower(${column}) collate ${collation}`
        : `${column} collate ${collation}`;
    }
    case 'enum': {
      const ranks = field.rank.map((value) => `${values.add(value)}::text`).join(', ');
      return `array_position(array[${ranks}]::text[], ${column}::text)`;
    }
  }
}

function termsOf(sort: Sort, values: Values): Term[] {
  const terms: Term[] = sort.keys.map((key) => ({
    expression: expressionOf(key.field, values),
    direction: key.direction,
    nulls: key.field.nulls,
    nullable: key.field.nullable,
    type: key.field.type,
  }));
  terms.push({
    expression: ident(sort.tiebreaker.column),
    direction: 'desc',
    nulls: 'last',
    nullable: false,
    type: 'id',
  });
  return terms;
}

// The keyset predicate of keysetPredicate (./keyset), as text: "row sorts strictly after the cursor".
function param(term: Term, value: string, values: Values): string {
  return term.type === 'timestamp' ? `${values.add(value)}::text::timestamptz` : values.add(value);
}

function keyset(terms: readonly Term[], cursor: readonly (string | null)[], values: Values): string {
  const pairs = terms.map((term, index) => ({ term, value: cursor[index] ?? null }));
  if (pairs.every(({ term, value }) => !term.nullable && value !== null && term.direction === 'desc')) {
    const left = pairs.map(({ term }) => term.expression).join(', ');
    const right = pairs.map(({ term, value }) => param(term, value ?? '', values)).join(', ');
    return `(${left}) < (${right})`;
  }
  const disjuncts: string[] = [];
  pairs.forEach(({ term, value }, index) => {
    const e = term.expression;
    let beyond: string | undefined;
    if (value === null) beyond = term.nulls === 'first' ? `${e} is not null` : undefined;
    else {
      const v = param(term, value, values);
      beyond = term.direction === 'asc' ? `${e} > ${v}` : `${e} < ${v}`;
      if (term.nullable && term.nulls === 'last') beyond = `(${beyond} or ${e} is null)`;
    }
    if (beyond === undefined) return;
    const equals = pairs
      .slice(0, index)
      .map((pair) =>
        pair.value === null
          ? `${pair.term.expression} is null`
          : `${pair.term.expression} = ${param(pair.term, pair.value, values)}`,
      );
    disjuncts.push(equals.length === 0 ? beyond : `(${[...equals, beyond].join(' and ')})`);
  });
  if (disjuncts.length === 0) return 'false';
  const predicate = `(${disjuncts.join(' or ')})`;
  const [first] = pairs;
  if (first && !first.term.nullable && first.value !== null) {
    const op = first.term.direction === 'asc' ? '>=' : '<=';
    return `${first.term.expression} ${op} ${param(first.term, first.value, values)} and ${predicate}`;
  }
  return predicate;
}

const keyName = (index: number) => `_hf_key_${index}`;
const sortName = (index: number) => `_hf_sort_${index}`;

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
  checkKeyring(options.keyring);
  const parsed = parseSort(options.allowlist, options.sort);
  if (!parsed.ok) throw parsed.error;
  const sort = parsed.value;
  const limit = clampLimit(options.limit);
  const include = parseInclude(options.include);
  const filter = options.filter ?? {};
  const columns = options.filterColumns ?? {};
  const binding = await cursorBinding({ sort: sort.canonical, filter, scope: options.binding });

  // The base conditions, built once per statement (each has its own numbering of values).
  const base = (values: Values): string[] => {
    const conditions = options.where ? [`(${values.condition(options.where)})`] : [];
    for (const [name, value] of Object.entries(filter)) {
      if (value === undefined) continue;
      const column = Object.hasOwn(columns, name) ? columns[name] : undefined;
      if (column === undefined) throw new TypeError(`filter "${name}" is not in filterColumns`);
      conditions.push(
        value === null ? `${ident(column)} is null` : `${ident(column)} = ${values.add(value)}`,
      );
    }
    return conditions;
  };

  const values = new Values();
  const terms = termsOf(sort, values);
  const conditions = base(values);
  if (options.cursor !== undefined && options.cursor !== null) {
    const decoded = await decodeCursor(options.keyring, options.cursor, { binding, size: terms.length });
    if (!decoded.ok) throw decoded.error;
    conditions.push(keyset(terms, decoded.value.values, values));
  }
  const helpers = terms
    .map((term, i) => `(${term.expression})::text as ${keyName(i)}, ${term.expression} as ${sortName(i)}`)
    .join(', ');
  const order = terms
    .map((term, i) => `${sortName(i)} ${term.direction} nulls ${term.nulls === 'first' ? 'first' : 'last'}`)
    .join(', ');
  const where = conditions.length > 0 ? conditions.join(' and ') : 'true';
  const text = `select ${options.select ?? '*'}, ${helpers} from ${options.from} where ${where} order by ${order} limit ${values.add(limit + 1)}::int`;
  // One at a time: a transaction's connection runs one statement at a time anyway.
  const rows = await db.query<Row>(text, values.list);
  let total: TotalCount | undefined;
  if (include.total) {
    const countValues = new Values();
    const countBase = base(countValues);
    const [counted] = await db.query<{ count: number }>(
      `select count(*)::int as count from (select 1 from ${options.from} where ${countBase.length > 0 ? countBase.join(' and ') : 'true'} limit ${countValues.add(TOTAL_COUNT_CAP + 1)}::int) as capped`,
      countValues.list,
    );
    total = cappedTotal(counted?.count ?? 0);
  }

  const hasMore = rows.length > limit;
  const size = Math.min(rows.length, limit);
  const last = size > 0 ? rows[size - 1] : undefined;
  const lastValues = last
    ? terms.map((_, i) => {
        const value = last[keyName(i)];
        return typeof value === 'string' ? value : null;
      })
    : [];
  const data: (T | Row)[] = new Array(size);
  for (let r = 0; r < size; r += 1) {
    const row = rows[r] as Row;
    for (let i = terms.length - 1; i >= 0; i -= 1) {
      delete row[sortName(i)];
      delete row[keyName(i)];
    }
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
  return pageEnvelope(data, { nextCursor, hasMore, total });
}
