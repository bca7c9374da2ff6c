import { problem } from '@holdfast/problem-details';
import { parseSort, type Sort } from '@holdfast/sort-allowlist';
import { cursorBinding, decodeCursor, encodeCursor } from './cursor-codec';
import { cappedTotal, type Page, pageEnvelope, TOTAL_COUNT_CAP, type TotalCount } from './envelope';
import { parseInclude } from './include';
import { checkKeyring } from './keyring';
import { ident, keysetBranches, sortTerms, type Term } from './keyset';
import { clampLimit, MAX_LIMIT } from './limit';
import type { PaginateOptions } from './paginate';
import { type Arg, join, Param, raw, type Statement, statement } from './statement';

/** The row counts a page's statement asks for: the smallest that holds `limit + 1` is used. */
const FETCH_SIZES = [11, 21, 51, MAX_LIMIT + 1] as const;

function fetchSize(limit: number): number {
  return FETCH_SIZES.find((size) => size > limit) ?? MAX_LIMIT + 1;
}

type Row = Record<string, unknown>;

/** What `paginate` reads from the request and from code, besides the trusted SQL pieces. */
export type PageRequest = Omit<PaginateOptions<unknown>, 'from' | 'where' | 'select' | 'map'>;

/** The caller's trusted pieces, in its driver's form. */
export interface PageSource<H> {
  readonly from: Arg<H>;
  readonly where?: Arg<H> | undefined;
  readonly select?: Arg<H> | undefined;
}

/** The statements of one page, built once for every driver, and what reads their rows. */
export interface PagePlan<H> {
  /** At least `limit + 1` rows in a total order (see FETCH_SIZES), with the helper columns. */
  readonly page: Statement<H>;
  /** The capped count, with `include=total`. */
  readonly count: Statement<H> | undefined;
  /** Turns the page's rows (and the count) into the envelope. */
  finish<T>(rows: Row[], count: number | undefined, map?: (row: Row) => T): Promise<Page<T | Row>>;
}

// Helper columns, removed from the rows handed back: each ORDER BY term as lossless text (what
// the next cursor holds), and each term with its own type (what ORDER BY sorts on).
const keyName = (index: number) => `_hf_key_${index}`;
const sortName = (index: number) => `_hf_sort_${index}`;
// The helper columns' names for each number of sort terms, made once.
const helperSets: ReadonlySet<string>[] = [];
const helperNamesOf = (terms: number): ReadonlySet<string> =>
  (helperSets[terms] ??= new Set(Array.from({ length: terms }, (_, i) => [keyName(i), sortName(i)]).flat()));

// What a sort always gives, whatever the request: its terms, the helper columns and the
// ORDER BY text. Built once per sort (an allowlist's default sort is one object for good).
interface SortPieces {
  readonly terms: Term<unknown>[];
  readonly helpers: Statement<unknown>;
  readonly order: string;
}
const pieces = new WeakMap<Sort, SortPieces>();

function piecesOf(sort: Sort): SortPieces {
  let made = pieces.get(sort);
  if (made === undefined) {
    const terms = sortTerms<unknown>(sort);
    made = {
      terms,
      helpers: join<unknown>(
        terms.map(
          (term, i) =>
            statement<unknown>`(${term.expression})::text as ${raw(keyName(i))}, ${term.expression} as ${raw(sortName(i))}`,
        ),
        ', ',
      ),
      // ORDER BY names the helper columns, never a bare column name: a bare name in ORDER BY
      // means an output column first (SQL-92 rule), so `select total::text as total` would
      // silently sort as text while the keyset predicate in WHERE compares the real column.
      // The planner still sees the column itself and uses an index on it.
      order: terms
        .map(
          (term, i) => `${sortName(i)} ${term.direction} nulls ${term.nulls === 'first' ? 'first' : 'last'}`,
        )
        .join(', '),
    };
    pieces.set(sort, made);
  }
  return made;
}

// The pieces hold no value of the caller's driver (trusted text only), so any H reads them.
const termsOf = <H>(sort: Sort): Term<H>[] => piecesOf(sort).terms as Term<H>[];
const sortPieces = <H>(sort: Sort) =>
  piecesOf(sort) as unknown as { readonly helpers: Statement<H>; readonly order: string };

/**
 * Parses and checks the request (400 `ProblemError`s for client input, `TypeError` for a wrong
 * call), then builds the page statement and the count: the same SQL for every driver.
 */
export async function planPage<H>(request: PageRequest, source: PageSource<H>): Promise<PagePlan<H>> {
  checkKeyring(request.keyring);
  const parsed = parseSort(request.allowlist, request.sort);
  if (!parsed.ok) throw parsed.error;
  const sort = parsed.value;
  const limit = clampLimit(request.limit);
  const include = parseInclude(request.include);
  const filter = request.filter ?? {};
  const columns = request.filterColumns ?? {};

  const base: Statement<H>[] = [];
  // Parenthesised: a caller's `a or b` must not absorb the filters and the keyset predicate
  // (`a or b and tenant...` would read as `a or (b and ...)`).
  if (source.where !== undefined) base.push(statement<H>`(${source.where})`);
  for (const [name, value] of Object.entries(filter)) {
    if (value === undefined) continue;
    const column = Object.hasOwn(columns, name) ? columns[name] : undefined;
    if (column === undefined) throw new TypeError(`filter "${name}" is not in filterColumns`);
    base.push(
      value === null
        ? statement<H>`${ident<H>(column)} is null`
        : statement<H>`${ident<H>(column)} = ${new Param(value)}`,
    );
  }
  const terms = termsOf<H>(sort);
  // An equality filter on an enum key's column fixes that key's rank. Saying so in the WHERE
  // (the rank as a number) lets the planner see the key as constant and serve the rest of the
  // order from an index that leads with the rank; the rows are the same, since the filter
  // already holds each row to that value.
  sort.keys.forEach((key, index) => {
    const term = terms[index];
    if (key.field.type !== 'enum' || term === undefined) return;
    for (const [name, value] of Object.entries(filter)) {
      if (typeof value !== 'string' || !Object.hasOwn(columns, name) || columns[name] !== key.field.column)
        continue;
      const rank = key.field.rank.indexOf(value);
      if (rank >= 0) base.push(statement<H>`${term.expression} = ${new Param(rank + 1)}::int`);
    }
  });
  const binding = await cursorBinding({ sort: sort.canonical, filter, scope: request.binding });

  let branches: Statement<H>[] = [];
  if (request.cursor !== undefined && request.cursor !== null) {
    const decoded = await decodeCursor(request.keyring, request.cursor, { binding, size: terms.length });
    if (!decoded.ok) throw decoded.error;
    branches = keysetBranches(terms, decoded.value.values);
  }
  const { helpers, order } = sortPieces<H>(sort);
  const helperNames = helperNamesOf(terms.length);
  const whereOf = (list: Statement<H>[]) => (list.length > 0 ? join<H>(list, ' and ') : raw<H>('true'));
  const select = source.select ?? raw<H>('*');
  // One row more than the limit tells whether another page exists. The count is written as a
  // literal, not a parameter: with `limit $n` the plan a prepared statement would keep for every
  // call is costed as if it returned a tenth of the rows, so PostgreSQL planned the list afresh
  // on every call, which over a table of many partitions costs several times its execution.
  // With a literal it keeps one plan per statement once its cost matches the fresh plans' (after
  // five calls on a connection). Each literal is a statement of its own that every connection
  // prepares and keeps, so a page asks for one of FETCH_SIZES rows, never one statement per
  // page size a client can ask for; the rows beyond `limit + 1` are not used.
  const limitText = raw<H>(String(fetchSize(limit)));
  const pageOf = (conditions: Statement<H>[]) =>
    statement<H>`select ${select}, ${helpers} from ${source.from} where ${whereOf(conditions)} order by ${raw(order)} limit ${limitText}`;
  // Several keyset branches (see keysetBranches): each branch's first rows, in order, merged;
  // every branch is an index range scan that stops after that many rows.
  const page =
    branches.length > 1
      ? statement<H>`select * from (${join<H>(
          branches.map((branch) => statement<H>`(${pageOf([...base, branch])})`),
          ' union all ',
        )}) as _hf_page order by ${raw(order)} limit ${limitText}`
      : pageOf([...base, ...branches]);
  const count = include.total
    ? statement<H>`select count(*)::int as count from (select 1 from ${source.from} where ${whereOf(base)} limit ${raw<H>(String(TOTAL_COUNT_CAP + 1))}) as capped`
    : undefined;

  return {
    page,
    count,
    async finish<T>(rows: Row[], counted: number | undefined, map?: (row: Row) => T) {
      const hasMore = rows.length > limit;
      const size = Math.min(rows.length, limit);
      const last = size > 0 ? rows[size - 1] : undefined;
      const lastValues = last
        ? terms.map((_, i) => {
            const value = last[keyName(i)];
            return typeof value === 'string' ? value : null;
          })
        : [];
      // Each row is copied without the helper columns: deleting properties costs V8 far more
      // than copying the rest. Every row of a result has the same columns.
      const data: (T | Row)[] = new Array(size);
      let columns: string[] | undefined;
      for (let r = 0; r < size; r += 1) {
        const row = rows[r] as Row;
        columns ??= Object.keys(row).filter((name) => !helperNames.has(name));
        const plain: Row = {};
        for (let c = 0; c < columns.length; c += 1) {
          const name = columns[c] as string;
          plain[name] = row[name];
        }
        data[r] = map ? map(plain) : plain;
      }
      let nextCursor: string | null = null;
      if (hasMore) {
        if (lastValues[lastValues.length - 1] == null) {
          throw problem('internal_error', {
            detail: 'The id tiebreaker column is NULL; it must be unique and not null.',
          });
        }
        nextCursor = await encodeCursor(request.keyring, { binding, values: lastValues });
      }
      const total: TotalCount | undefined = counted === undefined ? undefined : cappedTotal(counted);
      return pageEnvelope(data, { nextCursor, hasMore, total });
    },
  };
}
