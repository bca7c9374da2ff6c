import type { ResolvedSortField, SortAllowlist } from './allowlist';

/** The JSON Schema of the `sort` parameter (OpenAPI 3.1 Schema Object). */
export interface SortParameterSchema {
  readonly type: 'string';
  readonly pattern: string;
  readonly default: string;
  readonly example: string;
  /** The sortable aliases, machine-readable (sorting rule 11). */
  readonly 'x-sort-keys': readonly string[];
}

/** The OpenAPI 3.1 Parameter Object of `sort`. */
export interface SortParameterObject {
  readonly name: 'sort';
  readonly in: 'query';
  readonly required: false;
  readonly description: string;
  readonly schema: SortParameterSchema;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function describeField(alias: string, field: ResolvedSortField): string {
  const kind =
    field.type === 'enum'
      ? `ranked ${field.rank.join(' < ')}`
      : field.type === 'text'
        ? `text, ${field.caseInsensitive ? 'case-insensitive, ' : ''}collation ${field.collation ?? 'C'}`
        : field.type;
  const nulls = field.nullable ? `; nulls ${field.nulls}` : '';
  const note = field.description ? `: ${field.description}` : '';
  return `\`${alias}\` (${kind}${nulls})${note}`;
}

/**
 * A one-paragraph description of the `sort` parameter: syntax, allowed keys with their types
 * and ranks, the key limit, the default and the id tiebreaker.
 *
 * @example
 * ```ts
 * sortDescription(orderSort);
 * // 'Comma-separated sort keys in priority order; prefix a key with "-" for descending. ...'
 * ```
 */
export function sortDescription(allowlist: SortAllowlist): string {
  const keys = Object.entries(allowlist.fields)
    .map(([alias, field]) => describeField(alias, field))
    .join(', ');
  return (
    `Comma-separated sort keys in priority order; prefix a key with "-" for descending. ` +
    `Allowed keys: ${keys}. At most ${allowlist.maxKeys} keys, each at most once. ` +
    `Default: \`${allowlist.default.canonical}\`. Ties are broken by \`id\`, descending; ` +
    `nulls sort last unless stated. An unknown key is answered 400 invalid_sort, too many keys 400 too_many_sort_keys.`
  );
}

/**
 * The JSON Schema of `sort` built from the same declaration: a `pattern` accepting exactly the
 * allowed syntax, the default and the aliases (`x-sort-keys`). Documentation only: validate
 * with `parseSort`, which answers with the contract's codes.
 *
 * @example
 * ```ts
 * sortSchema(orderSort).pattern; // '^-?(?:createdAt|total|status)(?:,-?(?:createdAt|total|status)){0,2}$'
 * ```
 */
export function sortSchema(allowlist: SortAllowlist): SortParameterSchema {
  const alternatives = `(?:${allowlist.aliases.map(escapeRegExp).join('|')})`;
  const repeat = allowlist.maxKeys > 1 ? `(?:,-?${alternatives}){0,${allowlist.maxKeys - 1}}` : '';
  return {
    type: 'string',
    pattern: `^-?${alternatives}${repeat}$`,
    default: allowlist.default.canonical,
    example: allowlist.default.canonical,
    'x-sort-keys': [...allowlist.aliases],
  };
}

/**
 * The OpenAPI 3.1 Parameter Object for `sort`, for documents written by hand or merged into a
 * generated one (sorting rule 11).
 *
 * @example
 * ```ts
 * const doc = { paths: { '/v1/orders': { get: { parameters: [sortParameter(orderSort)] } } } };
 * ```
 */
export function sortParameter(allowlist: SortAllowlist): SortParameterObject {
  return {
    name: 'sort',
    in: 'query',
    required: false,
    description: sortDescription(allowlist),
    schema: sortSchema(allowlist),
  };
}
