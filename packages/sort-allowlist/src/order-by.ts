import type { NullPlacement, ResolvedSortField, Sort, SortDirection } from './allowlist';

/** One ORDER BY term as SQL text: what keyset predicates must match exactly. */
export interface SortExpression {
  /** The alias, or `id` for the tiebreaker. */
  readonly alias: string;
  /** The SQL expression sorted on (`"created_at"`, `lower("name") collate "C"`, an enum's rank). */
  readonly expression: string;
  readonly direction: SortDirection;
  readonly nulls: NullPlacement;
  /** Whether the expression may be NULL (enum ranks always may). */
  readonly nullable: boolean;
  /** The field type (`id` for the tiebreaker): how a value compared with the expression is typed. */
  readonly type: ResolvedSortField['type'] | 'id';
}

/** An identifier from code, quoted; `a.b` names a column of a table. */
function ident(name: string): string {
  return name
    .split('.')
    .map((part) => `"${part.replaceAll('"', '""')}"`)
    .join('.');
}

const literal = (value: string): string => `'${value.replaceAll("'", "''")}'`;

function expressionOf(field: ResolvedSortField): string {
  const column = ident(field.column);
  switch (field.type) {
    case 'number':
    case 'timestamp':
      return column;
    case 'text': {
      // A declared collation, and lower() for case-insensitive sorting.
      const collation = ident(field.collation ?? 'C');
      return field.caseInsensitive
        ? `lower(${column}) collate ${collation}`
        : `${column} collate ${collation}`;
    }
    case 'enum':
      // An explicit business rank. The values come from the allowlist in code, written as
      // literals so the text is the same on every driver and an expression index can match it.
      return `array_position(array[${field.rank.map(literal).join(', ')}]::text[], ${column}::text)`;
  }
}

/**
 * The ORDER BY terms of a sort as SQL text, the id tiebreaker last (descending, non-null): the
 * one source of the expressions that `orderBy`, keyset predicates and indexes must share. Only
 * identifiers and values from the allowlist in code reach the text, quoted; client text never
 * does. Runs on any driver.
 *
 * @example
 * ```ts
 * for (const term of sortExpressions(sort)) console.log(term.alias, term.expression, term.direction);
 * ```
 */
export function sortExpressions(sort: Sort): readonly SortExpression[] {
  const terms: SortExpression[] = sort.keys.map((key) => ({
    alias: key.alias,
    expression: expressionOf(key.field),
    direction: key.direction,
    nulls: key.field.nulls,
    nullable: key.field.nullable,
    type: key.field.type,
  }));
  // The unique id is the final tiebreaker, descending.
  terms.push({
    alias: 'id',
    expression: ident(sort.tiebreaker.column),
    direction: 'desc',
    nulls: 'last',
    nullable: false,
    type: 'id',
  });
  return terms;
}

/**
 * The ORDER BY list of a sort (without the keyword) as SQL text, null placement always
 * explicit. Index it with the same terms, e.g.
 * `create index on orders (created_at desc nulls last, id desc nulls last)`.
 *
 * @example
 * ```ts
 * const result = parseSort(orderSort, url.searchParams.get('sort'));
 * if (!result.ok) throw result.error;
 * const rows = await db.query(`select * from orders order by ${orderBy(result.value)} limit 20`);
 * ```
 */
export function orderBy(sort: Sort): string {
  return sortExpressions(sort)
    .map((term) => `${term.expression} ${term.direction} nulls ${term.nulls === 'first' ? 'first' : 'last'}`)
    .join(', ');
}
