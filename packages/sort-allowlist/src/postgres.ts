import type postgres from 'postgres';
import type { ISql as Sql } from 'postgres';
import type { NullPlacement, ResolvedSortField, Sort, SortDirection } from './allowlist';

type Fragment = postgres.Fragment;

/** One ORDER BY term as fragments: what keyset predicates must match exactly. */
export interface SortExpression {
  /** The alias, or `id` for the tiebreaker. */
  readonly alias: string;
  /** The SQL expression sorted on (`"created_at"`, `lower("name") collate "C"`, a rank). */
  readonly expression: Fragment;
  readonly direction: SortDirection;
  readonly nulls: NullPlacement;
  /** Whether the expression may be NULL (enum ranks always may). */
  readonly nullable: boolean;
  /** The field type (`id` for the tiebreaker): how a value compared with the expression is typed. */
  readonly type: ResolvedSortField['type'] | 'id';
}

/**
 * Joins fragments with a separator fragment (postgres.js has no join helper for fragments).
 *
 * @example
 * ```ts
 * const where = joinFragments(sql, [sql`account = ${account}`, sql`status = ${status}`], sql` and `);
 * ```
 */
export function joinFragments(sql: Sql, parts: readonly Fragment[], separator: Fragment): Fragment {
  let result: Fragment | undefined;
  for (const part of parts) result = result === undefined ? part : sql`${result}${separator}${part}`;
  return result ?? sql``;
}

function expressionOf(sql: Sql, field: ResolvedSortField): Fragment {
  const column = sql(field.column);
  switch (field.type) {
    case 'number':
    case 'timestamp':
      return sql`${column}`;
    case 'text': {
      // A declared collation, and lower() for case-insensitive sorting.
      const collation = sql(field.collation ?? 'C');
      return field.caseInsensitive
        ? sql`lower(${column}) collate ${collation}`
        : sql`${column} collate ${collation}`;
    }
    case 'enum': {
      // An explicit business rank, its values bound as parameters.
      const ranks = joinFragments(
        sql,
        field.rank.map((value) => sql`${value}`),
        sql`, `,
      );
      return sql`array_position(array[${ranks}]::text[], ${column}::text)`;
    }
  }
}

/**
 * The ORDER BY terms of a sort, the id tiebreaker last (descending, non-null): the single
 * source of truth that `orderBy` and keyset predicates share.
 *
 * @example
 * ```ts
 * for (const term of sortExpressions(sql, sort)) console.log(term.alias, term.direction);
 * ```
 */
export function sortExpressions(sql: Sql, sort: Sort): readonly SortExpression[] {
  const terms: SortExpression[] = sort.keys.map((key) => ({
    alias: key.alias,
    expression: expressionOf(sql, key.field),
    direction: key.direction,
    nulls: key.field.nulls,
    nullable: key.field.nullable,
    type: key.field.type,
  }));
  // The unique id is the final tiebreaker, descending.
  terms.push({
    alias: 'id',
    expression: sql`${sql(sort.tiebreaker.column)}`,
    direction: 'desc',
    nulls: 'last',
    nullable: false,
    type: 'id',
  });
  return terms;
}

/**
 * One ORDER BY term: direction and null placement are fixed fragments, never client text.
 *
 * @example
 * ```ts
 * const [first] = sortExpressions(sql, sort);
 * if (first) await sql`select id from orders order by ${orderByTerm(sql, first)}`;
 * ```
 */
export function orderByTerm(sql: Sql, term: SortExpression): Fragment {
  const direction = term.direction === 'desc' ? sql`desc` : sql`asc`;
  // Null placement is always explicit (NULLS LAST in the reference ordering),
  // so it never depends on the engine's default for the direction.
  const nulls = term.nulls === 'first' ? sql`nulls first` : sql`nulls last`;
  return sql`${term.expression} ${direction} ${nulls}`;
}

/**
 * The ORDER BY list of a sort (without the keyword), built from fragments and identifiers only:
 * client text never reaches SQL. Index it with the same terms, e.g.
 * `create index on orders (created_at desc nulls last, id desc nulls last)`.
 *
 * @example
 * ```ts
 * const result = parseSort(orderSort, c.req.query('sort'));
 * if (!result.ok) throw result.error;
 * const rows = await sql`select * from orders order by ${orderBy(sql, result.value)} limit 20`;
 * ```
 */
export function orderBy(sql: Sql, sort: Sort): Fragment {
  return joinFragments(
    sql,
    sortExpressions(sql, sort).map((term) => orderByTerm(sql, term)),
    sql`, `,
  );
}
