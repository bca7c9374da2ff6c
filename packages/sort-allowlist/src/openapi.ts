import type { ResolvedSortField, SortAllowlist } from './allowlist';

/**
 * The JSON Schema of the `sort` parameter (OpenAPI 3.1 Schema Object): an array of the allowed
 * `key` / `-key` values, so a client generated from the document cannot compile a typo. With
 * `style: form, explode: false` it is sent as `sort=-total,createdAt`
 * (https://spec.openapis.org/oas/v3.1.0#style-examples).
 */
export interface SortParameterSchema {
  readonly type: 'array';
  readonly items: { readonly type: 'string'; readonly enum: readonly string[] };
  readonly minItems: 1;
  readonly maxItems: number;
  readonly uniqueItems: true;
  readonly default: readonly string[];
  readonly example: readonly string[];
  /** The sortable aliases, machine-readable. */
  readonly 'x-sort-keys': readonly string[];
  /** The accepted sorts, each served by an index, when the allowlist declares them (`indexed`). */
  readonly 'x-sort-indexed'?: readonly string[];
}

/** The OpenAPI 3.1 Parameter Object of `sort`. */
export interface SortParameterObject {
  readonly name: 'sort';
  readonly in: 'query';
  readonly required: false;
  readonly style: 'form';
  readonly explode: false;
  readonly description: string;
  readonly schema: SortParameterSchema;
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
  const fine = allowlist.aliases.filter((alias) => allowlist.fields[alias]?.fineGrained === true);
  const longer =
    fine.length === 0
      ? ''
      : ` and any longer sort that starts with one of them ending in ${fine.map((alias) => `\`${alias}\``).join(' or ')}`;
  const indexed =
    allowlist.indexed === undefined
      ? ''
      : ` Sorts served by an index of their own: ${allowlist.indexed
          .map((sort) => `\`${sort}\``)
          .join(
            ', ',
          )}. Accepted: these${longer}; any other order is answered 400 invalid_sort (no index serves that order).`;
  return (
    `Comma-separated sort keys in priority order; prefix a key with "-" for descending. ` +
    `Allowed keys: ${keys}. At most ${allowlist.maxKeys} keys, each at most once. ` +
    `Default: \`${allowlist.default.canonical}\`. Ties are broken by \`id\`, descending; ` +
    `nulls sort last unless stated. An unknown key is answered 400 invalid_sort, too many keys 400 too_many_sort_keys.` +
    indexed
  );
}

/**
 * The JSON Schema of `sort` built from the same declaration: an array of the allowed values
 * (each alias ascending, then `-alias` descending), at most `maxKeys` of them, the default and
 * the aliases (`x-sort-keys`). A key given twice in both directions (`total,-total`) is still
 * refused by `parseSort` with `invalid_sort`: JSON Schema cannot say "unique by alias".
 * Documentation only: validate with `parseSort`, which answers with the contract's codes.
 *
 * @example
 * ```ts
 * sortSchema(orderSort).items.enum; // ['createdAt', '-createdAt', 'total', '-total', 'status', '-status']
 * ```
 */
export function sortSchema(allowlist: SortAllowlist): SortParameterSchema {
  const values = allowlist.aliases.flatMap((alias) => [alias, `-${alias}`]);
  const defaults = allowlist.default.canonical.split(',');
  return {
    type: 'array',
    items: { type: 'string', enum: values },
    minItems: 1,
    maxItems: allowlist.maxKeys,
    uniqueItems: true,
    default: defaults,
    example: defaults,
    'x-sort-keys': [...allowlist.aliases],
    ...(allowlist.indexed === undefined ? {} : { 'x-sort-indexed': [...allowlist.indexed] }),
  };
}

/**
 * The OpenAPI 3.1 Parameter Object for `sort`, for documents written by hand or merged into a
 * generated one.
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
    style: 'form',
    explode: false,
    description: sortDescription(allowlist),
    schema: sortSchema(allowlist),
  };
}
