import { parseSortKeys } from './parse-sort';
import { servingIndex } from './served';

/** Where NULL sorts, whatever the direction. */
export type NullPlacement = 'first' | 'last';

/** The direction a sort key resolves to: never client text. */
export type SortDirection = 'asc' | 'desc';

interface SortFieldCommon {
  /** The internal column (optionally qualified, `o.created_at`); quoted as an identifier, never spliced as text. */
  readonly column: string;
  /**
   * Whether the column may hold NULL. Keyset predicates only add NULL branches for nullable
   * fields, so a column declared non-nullable must be `not null` in the table.
   * @defaultValue `false` (`true` for enums: a value outside `rank` sorts like NULL)
   */
  readonly nullable?: boolean;
  /**
   * Where NULL sorts, in both directions.
   * @defaultValue `'last'` (the reference ordering: NULLS LAST)
   */
  readonly nulls?: NullPlacement;
  /** Shown in the OpenAPI description of the `sort` parameter. */
  readonly description?: string;
  /**
   * Values rarely repeat (timestamps, amounts of money): an index that serves a sort up to this
   * key also serves any longer sort, reading each run of equal values and sorting it by the
   * remaining keys (an incremental sort of a few rows). See `indexed`.
   * @defaultValue `false`
   */
  readonly fineGrained?: boolean;
}

/** Integers, bigints and numerics: stored and sorted as numbers, never as text. */
export interface NumberSortField extends SortFieldCommon {
  readonly type: 'number';
}

/** A `timestamptz` column; declare it `timestamptz(3)` so stored values carry exactly milliseconds. */
export interface TimestampSortField extends SortFieldCommon {
  readonly type: 'timestamp';
}

/** Text with a declared collation; `caseInsensitive` sorts by `lower(column)`. */
export interface TextSortField extends SortFieldCommon {
  readonly type: 'text';
  /** @defaultValue `'C'` (byte order: the same on every engine) */
  readonly collation?: string;
  /** Sort by `lower(column)`; index `lower(column) collate "<collation>"` to match. */
  readonly caseInsensitive?: boolean;
}

/** An enumeration sorted by an explicit business rank, not alphabetically. */
export interface EnumSortField extends SortFieldCommon {
  readonly type: 'enum';
  /** The values in ascending business order (`['pending', 'shipped', 'cancelled']`). */
  readonly rank: readonly string[];
}

/** One allowlisted sort field. */
export type SortField = NumberSortField | TimestampSortField | TextSortField | EnumSortField;

/** The declaration of a resource's sortable fields. */
export interface SortAllowlistInit<K extends string> {
  /** Alias (what clients send) to field; aliases are letters, digits and `_`, starting with a letter. */
  readonly fields: { readonly [A in K]: SortField };
  /** The unique id column: always the final tiebreaker, descending. */
  readonly id: { readonly column: string };
  /** The documented default sort of the endpoint, in the `sort` syntax (`'-createdAt'`). */
  readonly default: string;
  /**
   * At most this many keys per request.
   * @defaultValue `3`
   */
  readonly maxKeys?: number;
  /**
   * The sorts an index serves, in the `sort` syntax (`['-createdAt', 'createdAt', 'status,-createdAt']`),
   * each meaning an index on exactly those keys then the id descending. When given, a sort is
   * accepted only when an index serves it: it is one of these, or extends one whose last key is
   * `fineGrained` (the index reads it in order up to that key, and each short run of equal
   * values is sorted by the rest). Any other is 400 `invalid_sort` ("no index serves this
   * order"): it would read and sort every row in scope on each page, and with up to three keys
   * in two directions the combinations outnumber any sensible set of indexes. The default must
   * be accepted, and every alias must appear in one of them.
   * @defaultValue every combination of up to `maxKeys` keys is accepted
   */
  readonly indexed?: readonly string[];
}

/** A field with every default resolved. */
export type ResolvedSortField = SortField & { readonly nullable: boolean; readonly nulls: NullPlacement };

/** One resolved key of a sort. */
export interface SortKey<K extends string = string> {
  readonly alias: K;
  readonly direction: SortDirection;
  readonly field: ResolvedSortField;
}

/** A validated sort: the requested keys, then the id tiebreaker (applied when SQL is built). */
export interface Sort<K extends string = string> {
  readonly keys: readonly SortKey<K>[];
  /** The id column appended as final tiebreaker, descending. */
  readonly tiebreaker: { readonly column: string };
  /** The canonical text of the sort (`-createdAt,total`): what a cursor is bound to. */
  readonly canonical: string;
}

/** A resource's sort allowlist, built once by `defineSortAllowlist`. */
export interface SortAllowlist<K extends string = string> {
  readonly fields: { readonly [A in K]: ResolvedSortField };
  /** The aliases, in declaration order. */
  readonly aliases: readonly K[];
  readonly id: { readonly column: string };
  readonly default: Sort<K>;
  readonly maxKeys: number;
  /** The indexed sorts in canonical form when the declaration lists them; else `undefined` (every combination is accepted). */
  readonly indexed: readonly string[] | undefined;
}

/** The most sort keys a request may carry. */
export const MAX_SORT_KEYS = 3;

const ALIAS = /^[A-Za-z][A-Za-z0-9_]*$/;

function checkColumn(column: unknown, where: string): void {
  if (typeof column !== 'string' || column.length === 0) {
    throw new TypeError(`${where}: column must be a non-empty string`);
  }
}

function resolveField(alias: string, field: SortField): ResolvedSortField {
  checkColumn(field.column, `sort field "${alias}"`);
  const nulls = field.nulls ?? 'last';
  if (nulls !== 'first' && nulls !== 'last') {
    throw new TypeError(`sort field "${alias}": nulls must be "first" or "last"`);
  }
  switch (field.type) {
    case 'number':
    case 'timestamp':
      return { ...field, nullable: field.nullable ?? false, nulls };
    case 'text': {
      const collation = field.collation ?? 'C';
      if (typeof collation !== 'string' || collation.length === 0) {
        throw new TypeError(`sort field "${alias}": collation must be a non-empty string`);
      }
      return { ...field, collation, nullable: field.nullable ?? false, nulls };
    }
    case 'enum': {
      const rank = field.rank;
      if (!Array.isArray(rank) || rank.length === 0 || rank.some((value) => typeof value !== 'string')) {
        throw new TypeError(`sort field "${alias}": rank must be a non-empty array of strings`);
      }
      if (new Set(rank).size !== rank.length) {
        throw new TypeError(`sort field "${alias}": rank has repeated values`);
      }
      // array_position() yields NULL for a value missing from the rank, so the key is always
      // treated as nullable: keyset predicates then never lose such rows.
      return { ...field, rank: [...rank], nullable: true, nulls };
    }
    default:
      throw new TypeError(`sort field "${alias}": unknown type`);
  }
}

/**
 * Declares a resource's sortable fields once: aliases to columns with their types, null
 * placement, collations and enum ranks, the id tiebreaker and the endpoint's default sort.
 * Throws `TypeError` for a malformed declaration (a programming error, found at start-up).
 *
 * @example
 * ```ts
 * const orderSort = defineSortAllowlist({
 *   fields: {
 *     createdAt: { column: 'created_at', type: 'timestamp' },
 *     total: { column: 'total', type: 'number' },
 *     status: { column: 'status', type: 'enum', rank: ['pending', 'shipped', 'cancelled'] },
 *   },
 *   id: { column: 'id' },
 *   default: '-createdAt',
 * });
 * ```
 */
export function defineSortAllowlist<const K extends string>(init: SortAllowlistInit<K>): SortAllowlist<K> {
  const maxKeys = init.maxKeys ?? MAX_SORT_KEYS;
  if (!Number.isInteger(maxKeys) || maxKeys < 1 || maxKeys > MAX_SORT_KEYS) {
    throw new RangeError(`maxKeys must be an integer from 1 to ${MAX_SORT_KEYS}`);
  }
  checkColumn(init.id?.column, 'id');
  const aliases = Object.keys(init.fields) as K[];
  if (aliases.length === 0) throw new TypeError('a sort allowlist needs at least one field');
  const fields = {} as { [A in K]: ResolvedSortField };
  for (const alias of aliases) {
    if (!ALIAS.test(alias)) {
      throw new TypeError(`sort alias "${alias}" must be letters, digits and "_", starting with a letter`);
    }
    fields[alias] = resolveField(alias, init.fields[alias]);
  }
  const partial = { fields, aliases, id: { column: init.id.column }, maxKeys };
  const parsed = parseSortKeys(partial, init.default);
  if (!parsed.ok) throw new TypeError(`default sort "${init.default}" is invalid: ${parsed.error.detail}`);
  const indexed = init.indexed === undefined ? undefined : resolveIndexed(partial, init.indexed);
  if (indexed !== undefined && servingIndex({ fields, indexed }, parsed.value.canonical) === undefined) {
    throw new TypeError(`default sort "${parsed.value.canonical}" is served by none of the indexed sorts`);
  }
  return { ...partial, default: parsed.value, indexed };
}

function resolveIndexed<K extends string>(
  allowlist: Pick<SortAllowlist<K>, 'fields' | 'aliases' | 'id' | 'maxKeys'>,
  declared: readonly string[],
): readonly string[] {
  if (!Array.isArray(declared) || declared.length === 0) {
    throw new TypeError('indexed must be a non-empty array of sorts');
  }
  const canonical: string[] = [];
  for (const sort of declared) {
    const parsed = typeof sort === 'string' ? parseSortKeys(allowlist, sort) : undefined;
    if (!parsed?.ok) {
      throw new TypeError(
        `indexed sort ${JSON.stringify(sort)} is invalid${parsed ? `: ${parsed.error.detail}` : ''}`,
      );
    }
    if (canonical.includes(parsed.value.canonical)) {
      throw new TypeError(`indexed sort "${parsed.value.canonical}" is listed twice`);
    }
    canonical.push(parsed.value.canonical);
  }
  for (const alias of allowlist.aliases) {
    if (!canonical.some((sort) => sort.split(',').some((key) => key.replace(/^-/, '') === alias))) {
      throw new TypeError(`sort alias "${alias}" appears in no indexed sort`);
    }
  }
  return canonical;
}

/**
 * Every sort the allowlist accepts, in canonical form: every combination of up to `maxKeys`
 * distinct keys in both directions, less those no declared index serves (see `indexed`). What a
 * test walks to check that an index serves each one.
 *
 * @example
 * ```ts
 * acceptedSorts(orderSort); // ['createdAt', 'createdAt,total', 'createdAt,-total', ...]
 * ```
 */
export function acceptedSorts(allowlist: SortAllowlist): readonly string[] {
  const all = allCombinations(allowlist);
  return allowlist.indexed === undefined
    ? all
    : all.filter((sort) => servingIndex(allowlist, sort) !== undefined);
}

function allCombinations(allowlist: SortAllowlist): string[] {
  const keys = allowlist.aliases.flatMap((alias) => [alias, `-${alias}`]);
  const result: string[] = [];
  const extend = (prefix: readonly string[]) => {
    if (prefix.length > 0) result.push(prefix.join(','));
    if (prefix.length === allowlist.maxKeys) return;
    const used = new Set(prefix.map((key) => key.replace(/^-/, '')));
    for (const key of keys) if (!used.has(key.replace(/^-/, ''))) extend([...prefix, key]);
  };
  extend([]);
  return result;
}
