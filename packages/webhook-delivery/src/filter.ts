import { clipEcho, pointerToken, problem } from '@holdfast/problem-details';

/**
 * An endpoint's payload filter: a JSON object matched against an event's JSON body when the
 * event fans out. `{ "<dotted path>": <value> }` is equality; `{ "<path>": { "$gte": 10000 } }`
 * compares with an operator; `$and`, `$or` (arrays of filters) and `$not` (a filter) combine.
 * The package README ("Filters") states the semantics with examples.
 */
export type EventFilter = { readonly [key: string]: unknown };

/**
 * The bounds a filter is checked against on write.
 *
 * @example
 * ```ts
 * FILTER_LIMITS.conditions; // 50
 * ```
 */
export const FILTER_LIMITS: {
  /** Comparisons in all (each equality, each operator of an operator object). */
  readonly conditions: number;
  /** The filter's compact JSON, in UTF-8 bytes. */
  readonly bytes: number;
  /** `$and`, `$or` and `$not` nested in one another. */
  readonly depth: number;
  /** A dotted path's length in characters. */
  readonly pathLength: number;
  /** Values of one `$in` or `$nin`. */
  readonly values: number;
} = { conditions: 50, bytes: 4096, depth: 8, pathLength: 256, values: 50 };

/** One thing wrong with a filter: where (keys and indexes from the filter's root), and what. */
export interface FilterIssue {
  readonly path: readonly (string | number)[];
  readonly code: 'invalid_filter' | 'unknown_operator' | 'invalid_path' | 'too_many_conditions' | 'too_large';
  readonly detail: string;
}

const COMPARISONS = new Set(['$eq', '$ne', '$in', '$nin', '$gt', '$gte', '$lt', '$lte', '$exists']);
const COMBINATORS = new Set(['$and', '$or', '$not']);
// Issues past this many are not looked for: a problem shows 20, and a hostile filter stays cheap.
const MAX_ISSUES = 21;

// JSON.stringify writes U+0000 and lone surrogates as \u escapes (an escape preceded by an even
// number of backslashes); PostgreSQL's jsonb refuses both.
const JSONB_UNSAFE = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i;

/**
 * Whether JSON text from `JSON.stringify` can be read as PostgreSQL jsonb (no U+0000, no lone
 * surrogate): the fan-out evaluates filters only on such events, and a filter must be one.
 *
 * @example
 * ```ts
 * jsonbCanHold(JSON.stringify({ a: 'x' })); // true
 * jsonbCanHold(JSON.stringify({ a: '\u0000' })); // false
 * ```
 */
export function jsonbCanHold(text: string): boolean {
  return !JSONB_UNSAFE.test(text);
}

const isObject = (value: unknown): value is { [key: string]: unknown } =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** An object with a `$` key is an operator object; anything else after a path is a literal. */
const isOperatorObject = (value: unknown): value is { [key: string]: unknown } =>
  isObject(value) && Object.keys(value).some((key) => key.startsWith('$'));

function pathProblem(path: string): string | undefined {
  if (path.length > FILTER_LIMITS.pathLength)
    return `a path of at most ${FILTER_LIMITS.pathLength} characters`;
  const segments = path.split('.');
  if (segments.some((segment) => segment === '')) return 'a dotted path without empty segments';
  if (segments.some((segment) => segment.startsWith('$'))) return 'a path whose segments do not start with $';
  return undefined;
}

const bytes = (text: string): number => new TextEncoder().encode(text).length;

/** Why a filter number cannot be stored and compared exactly, or `undefined` when it can. */
function numberProblem(value: number): string | undefined {
  if (!Number.isFinite(value)) return 'a finite number (JSON has no Infinity or NaN)';
  if (Math.abs(value) > Number.MAX_SAFE_INTEGER)
    return `a number of at most 2^53 - 1 (${Number.MAX_SAFE_INTEGER}) in magnitude`;
  return undefined;
}

/**
 * What is wrong with `value` as an {@link EventFilter}, each issue with its place (empty when it
 * is a valid filter). Checked: a JSON object; known operators with operands of the right type;
 * dotted paths without empty segments or `$` segments; at most 50 conditions, 4 KiB, 8 levels;
 * every number finite and at most 2^53 - 1 in magnitude (JSON text and the database compare
 * those exactly: `Infinity` would be stored as `null`). At most 21 issues are reported.
 *
 * @example
 * ```ts
 * checkFilter({ 'data.object.total': { $gte: 10000 } }); // []
 * checkFilter({ 'data.object.total': { $gtx: 1 } }); // [{ path: ['data.object.total', '$gtx'], code: 'unknown_operator', ... }]
 * ```
 */
export function checkFilter(value: unknown): FilterIssue[] {
  if (!isObject(value)) return [{ path: [], code: 'invalid_filter', detail: 'a JSON object' }];
  const text = JSON.stringify(value);
  const size = bytes(text);
  if (size > FILTER_LIMITS.bytes) {
    return [
      { path: [], code: 'too_large', detail: `at most ${FILTER_LIMITS.bytes} bytes as JSON, got ${size}` },
    ];
  }
  if (!jsonbCanHold(text)) {
    return [{ path: [], code: 'invalid_filter', detail: 'text without U+0000 or lone surrogates' }];
  }
  const issues: FilterIssue[] = [];
  let conditions = 0;
  const add = (issue: FilterIssue) => {
    if (issues.length < MAX_ISSUES) issues.push(issue);
  };

  // Every number anywhere in a value (a literal, an operand, an item of $in): JSON text and the
  // database's numeric comparison hold it exactly only when it is finite and, when an integer,
  // at most 2^53 - 1 in magnitude (every double beyond that is an integer, and most integers
  // there have no double of their own). JSON.stringify writes Infinity as null, so an unchecked
  // 1e400 would be stored, and matched, as null.
  const numbers = (inner: unknown, at: readonly (string | number)[]) => {
    if (typeof inner === 'number') {
      const bad = numberProblem(inner);
      if (bad) add({ path: at, code: 'invalid_filter', detail: bad });
    } else if (Array.isArray(inner)) {
      inner.forEach((item, index) => {
        numbers(item, [...at, index]);
      });
    } else if (isObject(inner)) {
      for (const [key, item] of Object.entries(inner)) numbers(item, [...at, key]);
    }
  };

  const operand = (op: string, arg: unknown, at: readonly (string | number)[]) => {
    conditions += 1;
    numbers(arg, at);
    if (op === '$in' || op === '$nin') {
      if (!Array.isArray(arg)) add({ path: at, code: 'invalid_filter', detail: `${op} takes an array` });
      else if (arg.length > FILTER_LIMITS.values)
        add({
          path: at,
          code: 'invalid_filter',
          detail: `${op} takes at most ${FILTER_LIMITS.values} values`,
        });
    } else if (op === '$exists') {
      if (typeof arg !== 'boolean')
        add({ path: at, code: 'invalid_filter', detail: '$exists takes true or false' });
    } else if (op === '$gt' || op === '$gte' || op === '$lt' || op === '$lte') {
      if (typeof arg !== 'number' && typeof arg !== 'string')
        add({ path: at, code: 'invalid_filter', detail: `${op} takes a number or a string` });
    }
  };

  const walk = (filter: { [key: string]: unknown }, at: readonly (string | number)[], depth: number) => {
    if (depth > FILTER_LIMITS.depth) {
      add({
        path: at,
        code: 'invalid_filter',
        detail: `at most ${FILTER_LIMITS.depth} levels of $and, $or and $not`,
      });
      return;
    }
    for (const [key, inner] of Object.entries(filter)) {
      if (issues.length >= MAX_ISSUES) return;
      const here = [...at, key];
      if (key === '$and' || key === '$or') {
        if (!Array.isArray(inner) || inner.length === 0) {
          add({ path: here, code: 'invalid_filter', detail: `${key} takes a non-empty array of filters` });
          continue;
        }
        inner.forEach((item, index) => {
          if (isObject(item)) walk(item, [...here, index], depth + 1);
          else add({ path: [...here, index], code: 'invalid_filter', detail: 'a filter (a JSON object)' });
        });
      } else if (key === '$not') {
        if (isObject(inner)) walk(inner, here, depth + 1);
        else add({ path: here, code: 'invalid_filter', detail: '$not takes a filter (a JSON object)' });
      } else if (key.startsWith('$')) {
        add({
          path: here,
          code: 'unknown_operator',
          detail: `not an operator here: $and, $or and $not combine filters; ${[...COMPARISONS].join(', ')} go inside { "<path>": { ... } }`,
        });
      } else {
        const bad = pathProblem(key);
        if (bad) add({ path: here, code: 'invalid_path', detail: bad });
        if (!isOperatorObject(inner)) {
          conditions += 1;
          numbers(inner, here);
          continue;
        }
        for (const [op, arg] of Object.entries(inner)) {
          if (COMPARISONS.has(op)) operand(op, arg, [...here, op]);
          else if (op.startsWith('$'))
            add({
              path: [...here, op],
              code: 'unknown_operator',
              detail: `${COMBINATORS.has(op) ? `${op} combines filters and cannot follow a path` : 'not an operator'}; one of ${[...COMPARISONS].join(', ')}`,
            });
          else
            add({
              path: [...here, op],
              code: 'invalid_filter',
              detail: 'an operator object holds operators only (write { "$eq": { ... } } to match an object)',
            });
        }
      }
    }
  };
  walk(value, [], 0);
  if (conditions > FILTER_LIMITS.conditions) {
    add({
      path: [],
      code: 'too_many_conditions',
      detail: `at most ${FILTER_LIMITS.conditions} conditions, got ${conditions}`,
    });
  }
  return issues;
}

/**
 * A valid filter as stored: its JSON text, `-0` written as `0`. PostgreSQL's jsonb reads `-0` as
 * `0` while other drivers and stores may keep it; writing `0` everywhere makes what a filter
 * answers back the same value on every driver (and `-0` and `0` compare equal in any case).
 */
export function filterJson(filter: EventFilter): string {
  return JSON.stringify(filter, (_key, value: unknown) => (Object.is(value, -0) ? 0 : value));
}

/**
 * Throws 400 `validation_failed` naming each place in `filter` that is wrong (at most 20, the
 * detail saying how many more), unless `filter` is a valid {@link EventFilter}, or `null` or
 * `undefined` (no filter, or no change).
 *
 * @example
 * ```ts
 * assertFilter({ type: 'order.created' }, 'filter'); // returns
 * assertFilter({ total: { $gtx: 1 } }, 'filter'); // throws validation_failed naming filter.total.$gtx
 * ```
 */
export function assertFilter(filter: unknown, field = 'filter'): void {
  if (filter === undefined || filter === null) return;
  const issues = checkFilter(filter);
  if (issues.length === 0) return;
  // problem() keeps 20 entries, cuts echoed names to 100 characters and says how many it dropped.
  throw problem('validation_failed', {
    detail: `The filter is not valid: ${clipEcho([field, ...(issues[0]?.path ?? [])].join('.'))}: ${issues[0]?.detail ?? ''}.`,
    errors: issues.map((issue) => ({
      field: clipEcho([field, ...issue.path].join('.')),
      code: issue.code,
      pointer: `#/${[field, ...issue.path].map((part) => pointerToken(clipEcho(String(part)))).join('/')}`,
      detail: issue.detail,
    })),
  });
}
