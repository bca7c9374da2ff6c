import type { ResolvedSortField, Sort } from '@holdfast/sort-allowlist';
import type { SortExpression } from '@holdfast/sort-allowlist/postgres';
import type postgres from 'postgres';
import type { ISql as Sql } from 'postgres';
import { type Arg, Hole, join, Param, raw, type Statement, statement, toPostgres } from './statement';

/** One ORDER BY term: its expression (text built here, or a caller's fragment) and placement. */
export interface Term<H> {
  readonly expression: Arg<H>;
  readonly direction: 'asc' | 'desc';
  readonly nulls: 'first' | 'last';
  readonly nullable: boolean;
  readonly type: ResolvedSortField['type'] | 'id';
}

/** An identifier from code (allowlists, filterColumns), quoted; `a.b` names a column of a table. */
export function ident<H>(name: string): Statement<H> {
  return raw(
    name
      .split('.')
      .map((part) => `"${part.replaceAll('"', '""')}"`)
      .join('.'),
  );
}

// The same expressions as sortExpressions in @holdfast/sort-allowlist/postgres.
function expressionOf<H>(field: ResolvedSortField): Statement<H> {
  const column = ident<H>(field.column);
  switch (field.type) {
    case 'number':
    case 'timestamp':
      return column;
    case 'text': {
      // A declared collation, and lower() for case-insensitive sorting.
      const collation = ident<H>(field.collation ?? 'C');
      return field.caseInsensitive
        ? statement<H>`lower(${column}) collate ${collation}`
        : statement<H>`${column} collate ${collation}`;
    }
    case 'enum': {
      // An explicit business rank, its values bound as parameters.
      const ranks = join<H>(
        field.rank.map((value) => statement<H>`${new Param(value)}::text`),
        ', ',
      );
      return statement<H>`array_position(array[${ranks}]::text[], ${column}::text)`;
    }
  }
}

/** The ORDER BY terms of a sort, the id tiebreaker last (descending, non-null). */
export function sortTerms<H>(sort: Sort): Term<H>[] {
  const terms: Term<H>[] = sort.keys.map((key) => ({
    expression: expressionOf<H>(key.field),
    direction: key.direction,
    nulls: key.field.nulls,
    nullable: key.field.nullable,
    type: key.field.type,
  }));
  terms.push({
    expression: ident<H>(sort.tiebreaker.column),
    direction: 'desc',
    nulls: 'last',
    nullable: false,
    type: 'id',
  });
  return terms;
}

/**
 * A cursor value as a parameter. Timestamps go through text: postgres.js serializes a parameter
 * PostgreSQL describes as a timestamp through a JavaScript Date, which would drop microseconds,
 * so the value would no longer be exactly the one compared.
 */
function param<H>(term: Term<H>, value: string): Statement<H> {
  return term.type === 'timestamp'
    ? statement<H>`${new Param(value)}::text::timestamptz`
    : statement<H>`${new Param(value)}`;
}

/**
 * "Row sorts after the cursor on this term", or `undefined` when nothing can (a NULL cursor
 * value under NULLS LAST). Mirrors ORDER BY exactly: NULLs sit after every value under NULLS
 * LAST and before every value under NULLS FIRST, whatever the direction.
 */
function after<H>(term: Term<H>, value: string | null): Statement<H> | undefined {
  const e = term.expression;
  if (value === null) return term.nulls === 'first' ? statement<H>`${e} is not null` : undefined;
  const v = param(term, value);
  const beyond = term.direction === 'asc' ? statement<H>`${e} > ${v}` : statement<H>`${e} < ${v}`;
  if (term.nullable && term.nulls === 'last') return statement<H>`(${beyond} or ${e} is null)`;
  return beyond;
}

function equal<H>(term: Term<H>, value: string | null): Statement<H> {
  return value === null
    ? statement<H>`${term.expression} is null`
    : statement<H>`${term.expression} = ${param(term, value)}`;
}

/**
 * The keyset predicate of every driver: "row sorts strictly after the cursor position" for
 * ORDER BY terms (the id tiebreaker last) and the cursor's values, one per term.
 */
export function keysetStatement<H>(
  terms: readonly Term<H>[],
  values: readonly (string | null)[],
): Statement<H> {
  if (terms.length === 0 || values.length !== terms.length) {
    throw new TypeError(`keysetPredicate needs one value per term (${terms.length}), got ${values.length}`);
  }
  const pairs = terms.map((term, index) => ({ term, value: values[index] ?? null }));
  const rowComparable = pairs.every(
    ({ term, value }) => !term.nullable && value !== null && term.direction === 'desc',
  );
  if (rowComparable) {
    const left = join<H>(
      pairs.map(({ term }) => term.expression),
      ', ',
    );
    const right = join<H>(
      pairs.map(({ term, value }) => param(term, value ?? '')),
      ', ',
    );
    return statement<H>`(${left}) < (${right})`;
  }
  const disjuncts: Statement<H>[] = [];
  pairs.forEach(({ term, value }, index) => {
    const beyond = after(term, value);
    if (!beyond) return;
    const equals = pairs.slice(0, index).map((pair) => equal(pair.term, pair.value));
    disjuncts.push(equals.length === 0 ? beyond : statement<H>`(${join<H>([...equals, beyond], ' and ')})`);
  });
  if (disjuncts.length === 0) return raw('false');
  const predicate = statement<H>`(${join<H>(disjuncts, ' or ')})`;
  const [first] = pairs;
  if (first && !first.term.nullable && first.value !== null) {
    const bound =
      first.term.direction === 'asc'
        ? statement<H>`${first.term.expression} >= ${param(first.term, first.value)}`
        : statement<H>`${first.term.expression} <= ${param(first.term, first.value)}`;
    return statement<H>`${bound} and ${predicate}`;
  }
  return predicate;
}

/**
 * The keyset condition as disjoint ranges, each one index range: "equal to the cursor on the
 * terms before k, beyond it on term k" (a nullable term's NULLs after its values are a range of
 * their own). One branch when a row comparison says it all (every term descending and
 * non-null). A page with several branches reads each branch's first rows apart and merges them:
 * an OR of the branches in one WHERE is no index range, so a scan would start at the first
 * row of the order and filter up to the cursor, which costs as many rows as the cursor is deep
 * within its first key (a third of the table for a three-value enum).
 */
export function keysetBranches<H>(
  terms: readonly Term<H>[],
  values: readonly (string | null)[],
): Statement<H>[] {
  if (terms.length === 0 || values.length !== terms.length) {
    throw new TypeError(`keysetPredicate needs one value per term (${terms.length}), got ${values.length}`);
  }
  const pairs = terms.map((term, index) => ({ term, value: values[index] ?? null }));
  const rowComparable = pairs.every(
    ({ term, value }) => !term.nullable && value !== null && term.direction === 'desc',
  );
  if (rowComparable) return [keysetStatement(terms, values)];
  const branches: Statement<H>[] = [];
  // Last term first: the branch right after the cursor, then ever coarser ones.
  for (let index = pairs.length - 1; index >= 0; index -= 1) {
    const pair = pairs[index];
    if (pair === undefined) continue;
    const { term, value } = pair;
    const equals = pairs.slice(0, index).map((before) => equal(before.term, before.value));
    const beyond: Statement<H>[] = [];
    if (value === null) {
      if (term.nulls === 'first') beyond.push(statement<H>`${term.expression} is not null`);
    } else {
      const v = param(term, value);
      beyond.push(
        term.direction === 'asc'
          ? statement<H>`${term.expression} > ${v}`
          : statement<H>`${term.expression} < ${v}`,
      );
      if (term.nullable && term.nulls === 'last') beyond.push(statement<H>`${term.expression} is null`);
    }
    for (const condition of beyond) branches.push(join<H>([...equals, condition], ' and '));
  }
  return branches.length === 0 ? [raw('false')] : branches;
}

/**
 * The keyset predicate "row sorts strictly after the cursor position" for ORDER BY terms (the
 * id tiebreaker last) and the cursor's values, one per term, as a postgres.js fragment: the
 * predicate `paginate` runs on every driver, with the terms' own fragments in it. Values are
 * the terms' lossless text (`expression::text`), bound as parameters PostgreSQL reads back as
 * the expression's own type (timestamps through an explicit `::text::timestamptz`): the
 * comparison uses exactly the value the cursor carries, microseconds included.
 *
 * When every term is non-nullable and descending (the default `-createdAt` plus id) it is a
 * row comparison, `(created_at, id) < ($1, $2)`, which a btree index on the same terms answers
 * as a range. Otherwise it is the expanded OR of ANDs, with explicit NULL branches, led by a
 * bound on the first term when that term is non-nullable so the index still limits the scan.
 *
 * @example
 * ```ts
 * const terms = sortExpressions(sql, sort);
 * const rows = await sql`select * from orders where ${keysetPredicate(sql, terms, cursor.values)}
 *   order by ${orderBy(sql, sort)} limit 21`;
 * ```
 */
export function keysetPredicate(
  sql: Sql,
  terms: readonly SortExpression[],
  values: readonly (string | null)[],
): postgres.Fragment {
  const holes: Term<postgres.Fragment>[] = terms.map((term) => ({
    expression: new Hole(term.expression),
    direction: term.direction,
    nulls: term.nulls,
    nullable: term.nullable,
    type: term.type,
  }));
  return toPostgres(sql, keysetStatement(holes, values));
}
