import type { FieldError, ProblemError } from '@holdfast/problem-details';
import type { ResolvedSortField, Sort, SortAllowlist, SortDirection, SortKey } from './allowlist';
import { sortProblems } from './problems';
import { servingIndex } from './served';

/** The problems a `sort` parameter can produce. */
export type SortProblem = ProblemError<'invalid_sort' | 'too_many_sort_keys'>;

/** The result of `parseSort`: a validated sort, or the problem to answer with. */
export type SortResult<K extends string = string> =
  | { readonly ok: true; readonly value: Sort<K> }
  | { readonly ok: false; readonly error: SortProblem };

type ParseInput<K extends string> = Pick<SortAllowlist<K>, 'fields' | 'aliases' | 'id' | 'maxKeys'>;

// Client text is echoed in details only up to this length, so a huge parameter is not reflected.
const ECHO_LIMIT = 64;

function quote(text: string): string {
  return JSON.stringify(text.length > ECHO_LIMIT ? `${text.slice(0, ECHO_LIMIT)}…` : text);
}

function failure(code: 'invalid_sort' | 'too_many_sort_keys', errors: FieldError[]): SortResult<never> {
  return {
    ok: false,
    error: sortProblems.create(code, { detail: errors[0]?.detail ?? 'Invalid sort.', errors }),
  };
}

/** @internal Shared by `parseSort` and `defineSortAllowlist` (which checks the default). */
export function parseSortKeys<K extends string>(allowlist: ParseInput<K>, raw: string): SortResult<K> {
  const segments = raw.split(',');
  // More than the allowed number of keys is too_many_sort_keys whatever
  // else is wrong, so the count is checked before any key is looked at.
  if (segments.length > allowlist.maxKeys) {
    const detail = `Sort has ${segments.length} keys; at most ${allowlist.maxKeys} are allowed.`;
    return failure('too_many_sort_keys', [{ field: 'sort', code: 'too_many_sort_keys', detail }]);
  }
  const errors: FieldError[] = [];
  const keys: SortKey<K>[] = [];
  const seen = new Set<string>();
  const allowed = allowlist.aliases.join(', ');
  segments.forEach((segment, index) => {
    const fail = (detail: string) => errors.push({ field: 'sort', code: 'invalid_sort', detail });
    if (segment.length === 0) {
      fail(`Sort key ${index + 1} is empty; separate keys with single commas.`);
      return;
    }
    // `key` is ascending and `-key` descending; nothing else names a direction.
    const direction: SortDirection = segment.startsWith('-') ? 'desc' : 'asc';
    const name = direction === 'desc' ? segment.slice(1) : segment;
    if (name.length === 0 || name.startsWith('-') || name.startsWith('+')) {
      fail(
        `Sort key ${quote(segment)} has an invalid direction: use "key" (ascending) or "-key" (descending).`,
      );
      return;
    }
    if (!Object.hasOwn(allowlist.fields, name)) {
      // An unknown key is refused, and named.
      fail(`Unknown sort key ${quote(name)}. Allowed keys: ${allowed}.`);
      return;
    }
    if (seen.has(name)) {
      fail(`Sort key ${quote(name)} is repeated.`);
      return;
    }
    seen.add(name);
    const alias = name as K;
    const field: ResolvedSortField = allowlist.fields[alias];
    keys.push({ alias, direction, field });
  });
  if (errors.length > 0) return failure('invalid_sort', errors);
  const canonical = keys.map((key) => (key.direction === 'desc' ? `-${key.alias}` : key.alias)).join(',');
  return { ok: true, value: { keys, tiebreaker: { column: allowlist.id.column }, canonical } };
}

/**
 * Parses a `sort` query parameter (`a`, `-a`, `a,-b`) against an allowlist. Absent (`undefined`
 * or `null`) gives the endpoint's default sort; an empty string is an empty key. Errors are
 * results, not throws: `invalid_sort` (unknown key, named; repeated key; empty segment; bad
 * direction) or `too_many_sort_keys` (checked first).
 *
 * @example
 * ```ts
 * const result = parseSort(orderSort, c.req.query('sort'));
 * if (!result.ok) throw result.error; // 400 problem+json
 * result.value.canonical; // '-createdAt'
 * ```
 */
export function parseSort<K extends string>(
  allowlist: SortAllowlist<K>,
  raw: string | null | undefined,
): SortResult<K> {
  if (raw === undefined || raw === null) return { ok: true, value: allowlist.default };
  if (typeof raw !== 'string') {
    return failure('invalid_sort', [
      { field: 'sort', code: 'invalid_sort', detail: 'Sort must be a string.' },
    ]);
  }
  const parsed = parseSortKeys(allowlist, raw);
  if (
    parsed.ok &&
    allowlist.indexed !== undefined &&
    servingIndex(allowlist, parsed.value.canonical) === undefined
  ) {
    // Every accepted sort is one an index serves; any other would read and sort every row in
    // scope on each page.
    const detail = `No index serves the order ${quote(parsed.value.canonical)}. Indexed sorts: ${allowlist.indexed.map((sort) => JSON.stringify(sort)).join(', ')}.`;
    return failure('invalid_sort', [{ field: 'sort', code: 'invalid_sort', detail }]);
  }
  return parsed;
}
