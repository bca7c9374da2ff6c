import { problem } from './catalogue';
import type { FieldError, ProblemError } from './problem-error';

/**
 * The part of a zod issue the converter reads. Duck-typed, so this package needs no zod at
 * run time and accepts issues from zod 3 and zod 4 alike.
 */
export interface ZodLikeIssue {
  readonly code: string;
  readonly path: readonly PropertyKey[];
  readonly message: string;
  /** Present on `unrecognized_keys` issues. */
  readonly keys?: readonly string[];
}

/** Anything with zod's `issues` array: a `ZodError` or a failed `safeParse` result's error. */
export interface ZodLikeError {
  readonly issues: readonly ZodLikeIssue[];
}

export interface FromZodOptions {
  /**
   * Where the validated value came from. `body` entries carry a JSON `pointer`; `query`, `path`
   * and `header` entries name the parameter in `field` only, since a pointer addresses a JSON
   * document.
   * @defaultValue `'body'`
   */
  location?: 'body' | 'query' | 'path' | 'header';
}

/** RFC 6901: `~` becomes `~0` and `/` becomes `~1`; the URI-fragment form percent-encodes the rest. */
function pointerOf(path: readonly PropertyKey[]): string {
  const tokens = path.map((segment) =>
    encodeURIComponent(String(segment).replaceAll('~', '~0').replaceAll('/', '~1')).replaceAll('%7E', '~'),
  );
  return `#${tokens.map((token) => `/${token}`).join('')}`;
}

function fieldOf(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(root)' : path.map(String).join('.');
}

/**
 * Converts a zod validation error into a 400 problem. Each unknown key becomes its own
 * `unknown_field` entry (and the problem's code is `unknown_field` when there is any); every other issue becomes an entry with zod's issue code and the
 * field path, under `validation_failed`.
 *
 * @example
 * ```ts
 * const parsed = OrderInput.strict().safeParse(body);
 * if (!parsed.success) throw fromZodError(parsed.error);
 * // 400 { code: 'unknown_field', errors: [{ field: 'colour', code: 'unknown_field', pointer: '#/colour' }] }
 * ```
 */
export function fromZodError(
  error: ZodLikeError,
  options: FromZodOptions = {},
): ProblemError<'unknown_field' | 'validation_failed'> {
  const location = options.location ?? 'body';
  const entries: FieldError[] = [];
  let unknownCount = 0;
  const entry = (path: readonly PropertyKey[], code: string, detail: string): FieldError => ({
    field: fieldOf(path),
    code,
    ...(location === 'body' ? { pointer: pointerOf(path) } : {}),
    detail,
  });
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys' && issue.keys) {
      for (const key of issue.keys) {
        unknownCount += 1;
        const where = location === 'body' ? 'field' : `${location} parameter`;
        entries.push(entry([...issue.path, key], 'unknown_field', `Unknown ${where} "${key}".`));
      }
      continue;
    }
    entries.push(entry(issue.path, issue.code, issue.message));
  }
  if (unknownCount > 0) {
    const names = entries.filter((e) => e.code === 'unknown_field').map((e) => `"${e.field}"`);
    return problem('unknown_field', {
      detail: `Unknown ${location === 'body' ? 'field' : `${location} parameter`}${names.length > 1 ? 's' : ''} ${names.join(', ')}.`,
      errors: entries,
    });
  }
  const first = entries[0];
  return problem('validation_failed', {
    detail:
      entries.length === 1 && first
        ? `${first.field}: ${first.detail ?? first.code}`
        : `${entries.length} fields failed validation.`,
    errors: entries,
  });
}
