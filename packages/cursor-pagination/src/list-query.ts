import { clipEcho, problem } from '@holdfast/problem-details';
import { parseSort, type Sort, type SortAllowlist } from '@holdfast/sort-allowlist';
import { type CursorPayload, cursorBinding, decodeCursor, type FilterValue } from './cursor-codec';
import { type Include, parseInclude } from './include';
import { checkKeyring, type Keyring } from './keyring';
import { clampLimit, MAX_LIMIT } from './limit';

// The framework-neutral core of the list query: every door (`/hono`, `/express`, `/fastify`)
// only hands it the request's query string, and a Fetch handler calls it with `url.searchParams`.

/** A request's query: its parameters, its URL, or a record of raw values (`req.query`). */
export type ListQueryInput = URLSearchParams | URL | Readonly<Record<string, unknown>>;

/** What a list query is checked against: the same values `paginate` takes. */
export interface ListQueryOptions<K extends string = string> {
  readonly allowlist: SortAllowlist<K>;
  readonly keyring: Keyring;
  /** What the cursor is bound to besides sort and filter: `{ account, resource: 'orders' }`. */
  readonly binding: { readonly account: string; readonly [key: string]: string };
  /** Equality filters in force, by filter name (each is in the cursor binding). */
  readonly filter?: Readonly<Record<string, FilterValue | undefined>>;
  /**
   * The largest page of this list, 1 to `MAX_LIMIT`: a larger `limit` is clamped to it, never
   * refused. @defaultValue `MAX_LIMIT` (100)
   */
  readonly maxLimit?: number;
}

/** A checked list query: what the page is, and the raw options `paginate` takes. */
export interface ListQuery<K extends string = string> {
  /** The sort, with the allowlist's default when none was asked for. */
  readonly sort: Sort<K>;
  /** The page size, clamped (never refused): missing, non-numeric or zero gives 20. */
  readonly limit: number;
  readonly include: Include;
  /** The cursor as sent, verified: signed by the keyring, issued for this sort, filter and binding. */
  readonly cursor: string | undefined;
  /** The position the cursor carries: the sort-key values and the id, as compared. */
  readonly after: CursorPayload['values'] | undefined;
  /** `cursorBinding` of the sort, filter and binding: what a next cursor is signed for. */
  readonly binding: string;
  /**
   * The query as `paginate`'s raw options, to spread into its call:
   * `paginate(db, { from, allowlist, binding, keyring, ...query.params })`.
   */
  readonly params: {
    readonly sort: string;
    readonly limit: number;
    readonly cursor: string | undefined;
    readonly include: string | undefined;
  };
}

const NAMES = ['sort', 'limit', 'cursor', 'include'] as const;
type Name = (typeof NAMES)[number];

function repeated(name: Name, count: number) {
  return problem('validation_failed', {
    detail: `The query parameter ${name} is given ${count} times; give it once.`,
    errors: [{ field: name, code: 'repeated', detail: `Given ${count} times; give it once.` }],
  });
}

/** One raw value per parameter, or `undefined`; a repeated parameter is 400 (never a guess). */
function rawValues(input: ListQueryInput): Record<Name, string | undefined> {
  const out: Record<Name, string | undefined> = {
    sort: undefined,
    limit: undefined,
    cursor: undefined,
    include: undefined,
  };
  if (input instanceof URL || input instanceof URLSearchParams) {
    const params = input instanceof URL ? input.searchParams : input;
    for (const name of NAMES) {
      const all = params.getAll(name);
      if (all.length > 1) throw repeated(name, all.length);
      out[name] = all[0];
    }
    return out;
  }
  for (const name of NAMES) {
    const value = Object.hasOwn(input, name) ? input[name] : undefined;
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) {
      if (value.length > 1) throw repeated(name, value.length);
      const [only] = value;
      if (only === undefined) continue;
      if (typeof only !== 'string') throw notText(name);
      out[name] = only;
      continue;
    }
    // A nested value (`?sort[a]=b` under a qs-style parser) is not a list parameter.
    if (typeof value !== 'string') throw notText(name);
    out[name] = value;
  }
  return out;
}

function notText(name: Name) {
  return problem('validation_failed', {
    detail: `The query parameter ${clipEcho(name)} must be a plain value.`,
    errors: [{ field: name, code: 'invalid_type', detail: 'Must be a plain value.' }],
  });
}

/**
 * Checks a list request's `sort`, `limit`, `cursor` and `include` before any database work, by
 * the same rules as `paginate`: `sort` against the allowlist (400 `invalid_sort`,
 * `too_many_sort_keys`), `limit` clamped to 1..`maxLimit` (never refused), `include` (400
 * `validation_failed`), and the cursor verified, signed by the keyring and issued for this sort,
 * filter and binding (400 `invalid_cursor`). A parameter given twice is 400 `validation_failed`
 * (`repeated`). Throws `ProblemError`s; every door renders them as problem+json.
 *
 * @example
 * ```ts
 * const query = await parseListQuery(new URL(request.url), { allowlist: orderSort, keyring, binding: { account } });
 * const page = await paginate(db, { from: 'orders', allowlist: orderSort, binding: { account }, keyring, ...query.params });
 * ```
 */
export async function parseListQuery<K extends string>(
  input: ListQueryInput,
  options: ListQueryOptions<K>,
): Promise<ListQuery<K>> {
  const maxLimit = options.maxLimit ?? MAX_LIMIT;
  if (!Number.isInteger(maxLimit) || maxLimit < 1 || maxLimit > MAX_LIMIT) {
    throw new RangeError(`maxLimit must be an integer from 1 to ${MAX_LIMIT}`);
  }
  checkKeyring(options.keyring);
  const raw = rawValues(input);
  const parsed = parseSort(options.allowlist, raw.sort);
  if (!parsed.ok) throw parsed.error;
  const sort = parsed.value;
  const limit = Math.min(clampLimit(raw.limit), maxLimit);
  const include = parseInclude(raw.include);
  const binding = await cursorBinding({
    sort: sort.canonical,
    ...(options.filter === undefined ? {} : { filter: options.filter }),
    scope: options.binding,
  });
  let after: CursorPayload['values'] | undefined;
  if (raw.cursor !== undefined) {
    // The id tiebreaker is the last term, after the sort's keys.
    const decoded = await decodeCursor(options.keyring, raw.cursor, { binding, size: sort.keys.length + 1 });
    if (!decoded.ok) throw decoded.error;
    after = decoded.value.values;
  }
  return {
    sort,
    limit,
    include,
    cursor: raw.cursor,
    after,
    binding,
    params: { sort: sort.canonical, limit, cursor: raw.cursor, include: raw.include },
  };
}
