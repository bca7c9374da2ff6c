import { type ResolvedSortField, type Sort, sortExpressions } from '@holdfast/sort-allowlist';
import { type Arg, join, Param, raw, type Statement, statement } from './statement';

/** One ORDER BY term: its expression (trusted text from the allowlist) and placement. */
export interface Term<H> {
  readonly expression: Arg<H>;
  readonly direction: 'asc' | 'desc';
  readonly nulls: 'first' | 'last';
  readonly nullable: boolean;
  readonly type: ResolvedSortField['type'] | 'id';
}

/** An identifier from code (filterColumns), quoted; `a.b` names a column of a table. */
export function ident<H>(name: string): Statement<H> {
  return raw(
    name
      .split('.')
      .map((part) => `"${part.replaceAll('"', '""')}"`)
      .join('.'),
  );
}

/** The ORDER BY terms of a sort (sortExpressions of the allowlist package), the id tiebreaker last. */
export function sortTerms<H>(sort: Sort): Term<H>[] {
  return sortExpressions(sort).map((term) => ({
    expression: raw<H>(term.expression),
    direction: term.direction,
    nulls: term.nulls,
    nullable: term.nullable,
    type: term.type,
  }));
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
    // The leading term bounded alone too, as below: the planner bounds an index range and
    // prunes partitions (a table partitioned by time) by a plain comparison, never by a row's.
    const [first] = pairs;
    if (!first) return statement<H>`(${left}) < (${right})`;
    return statement<H>`${first.term.expression} <= ${param(first.term, first.value ?? '')} and (${left}) < (${right})`;
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
