import { joinFragments, type SortExpression } from '@holdfast/sort-allowlist/postgres';
import type postgres from 'postgres';
import type { ISql as Sql } from 'postgres';

type Fragment = postgres.Fragment;

/**
 * A cursor value as a parameter. Timestamps go through text: postgres.js serializes a parameter
 * PostgreSQL describes as a timestamp through a JavaScript Date, which would drop microseconds,
 * so the value would no longer be exactly the one compared.
 */
function param(sql: Sql, term: SortExpression, value: string): Fragment {
  return term.type === 'timestamp' ? sql`${value}::text::timestamptz` : sql`${value}`;
}

/**
 * "Row sorts after the cursor on this term", or `undefined` when nothing can (a NULL cursor
 * value under NULLS LAST). Mirrors ORDER BY exactly: NULLs sit after every value under NULLS
 * LAST and before every value under NULLS FIRST, whatever the direction.
 */
function after(sql: Sql, term: SortExpression, value: string | null): Fragment | undefined {
  const e = term.expression;
  if (value === null) return term.nulls === 'first' ? sql`${e} is not null` : undefined;
  const v = param(sql, term, value);
  const beyond = term.direction === 'asc' ? sql`${e} > ${v}` : sql`${e} < ${v}`;
  if (term.nullable && term.nulls === 'last') return sql`(${beyond} or ${e} is null)`;
  return beyond;
}

function equal(sql: Sql, term: SortExpression, value: string | null): Fragment {
  return value === null
    ? sql`${term.expression} is null`
    : sql`${term.expression} = ${param(sql, term, value)}`;
}

/**
 * The keyset predicate "row sorts strictly after the cursor position" for ORDER BY terms (the
 * id tiebreaker last) and the cursor's values, one per term. Values are the terms' lossless
 * text (`expression::text`), bound as parameters PostgreSQL reads back as the expression's own
 * type (timestamps through an explicit `::text::timestamptz`): the comparison uses exactly the
 * value the cursor carries, microseconds included.
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
): Fragment {
  if (terms.length === 0 || values.length !== terms.length) {
    throw new TypeError(`keysetPredicate needs one value per term (${terms.length}), got ${values.length}`);
  }
  const pairs = terms.map((term, index) => ({ term, value: values[index] ?? null }));
  const rowComparable = pairs.every(
    ({ term, value }) => !term.nullable && value !== null && term.direction === 'desc',
  );
  if (rowComparable) {
    const left = joinFragments(
      sql,
      pairs.map(({ term }) => term.expression),
      sql`, `,
    );
    const right = joinFragments(
      sql,
      pairs.map(({ term, value }) => param(sql, term, value ?? '')),
      sql`, `,
    );
    return sql`(${left}) < (${right})`;
  }
  const disjuncts: Fragment[] = [];
  pairs.forEach(({ term, value }, index) => {
    const beyond = after(sql, term, value);
    if (!beyond) return;
    const equals = pairs.slice(0, index).map((pair) => equal(sql, pair.term, pair.value));
    disjuncts.push(
      equals.length === 0 ? beyond : sql`(${joinFragments(sql, [...equals, beyond], sql` and `)})`,
    );
  });
  if (disjuncts.length === 0) return sql`false`;
  const predicate = sql`(${joinFragments(sql, disjuncts, sql` or `)})`;
  const [first] = pairs;
  if (first && !first.term.nullable && first.value !== null) {
    const bound =
      first.term.direction === 'asc'
        ? sql`${first.term.expression} >= ${param(sql, first.term, first.value)}`
        : sql`${first.term.expression} <= ${param(sql, first.term, first.value)}`;
    return sql`${bound} and ${predicate}`;
  }
  return predicate;
}
