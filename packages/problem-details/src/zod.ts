import {
  clipEcho,
  clipPointer,
  formatCount,
  MAX_ENTRY_DETAIL_LENGTH,
  MAX_ERRORS,
  pointerToken,
} from './bounds';
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

/** A path segment as echoed: client keys are cut to 100 characters before anything else is done with them. */
const segmentOf = (segment: PropertyKey) => clipEcho(String(segment));

/** RFC 6901: `~` becomes `~0` and `/` becomes `~1`; the URI-fragment form percent-encodes the rest. */
function pointerOf(path: readonly PropertyKey[]): string {
  const tokens = path.map((segment) => pointerToken(segmentOf(segment)));
  return clipPointer(`#${tokens.map((token) => `/${token}`).join('')}`);
}

function fieldOf(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(root)' : clipEcho(path.map(segmentOf).join('.'));
}

const plural = (count: number, one: string, many: string) => (count === 1 ? one : many);

/**
 * Converts a zod validation error into a 400 problem. Each unknown key becomes its own
 * `unknown_field` entry (and the problem's code is `unknown_field` when there is any); every
 * other issue becomes an entry with zod's issue code and the field path, under
 * `validation_failed`. Bounded whatever the input: at most 20 entries are
 * built (`MAX_ERRORS`), `detail` says how many more there were, and each echoed name is cut to
 * 100 characters, so 100,000 unknown keys cost 20 entries, not 100,000.
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
  const where = location === 'body' ? 'field' : `${location} parameter`;
  const entries: FieldError[] = [];
  const unknownNames: string[] = [];
  let total = 0;
  let unknownTotal = 0;
  const entry = (path: readonly PropertyKey[], code: string, detail: string): FieldError => ({
    field: fieldOf(path),
    code,
    ...(location === 'body' ? { pointer: pointerOf(path) } : {}),
    detail,
  });
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys' && issue.keys) {
      // Counted, not walked: only the keys that get an entry are looked at.
      total += issue.keys.length;
      unknownTotal += issue.keys.length;
      for (let i = 0; i < issue.keys.length && entries.length < MAX_ERRORS; i += 1) {
        const key = String(issue.keys[i]);
        const made = entry([...issue.path, key], 'unknown_field', `Unknown ${where} "${segmentOf(key)}".`);
        entries.push(made);
        unknownNames.push(`"${made.field}"`);
      }
      continue;
    }
    total += 1;
    if (entries.length < MAX_ERRORS) {
      entries.push(entry(issue.path, issue.code, clipEcho(issue.message, MAX_ENTRY_DETAIL_LENGTH)));
    }
  }
  const unlisted = total - entries.length;
  if (unknownTotal > 0) {
    const unknownUnlisted = unknownTotal - unknownNames.length;
    const otherUnlisted = unlisted - unknownUnlisted;
    const names = unknownNames.join(', ');
    return problem('unknown_field', {
      detail:
        `Unknown ${where}${plural(unknownTotal, '', 's')} ${names}` +
        (unknownUnlisted > 0 ? ` … and ${formatCount(unknownUnlisted)} more.` : '.') +
        (otherUnlisted > 0
          ? ` … and ${formatCount(otherUnlisted)} more ${plural(otherUnlisted, 'error', 'errors')}, not listed.`
          : ''),
      errors: entries,
    });
  }
  const first = entries[0];
  return problem('validation_failed', {
    detail:
      total === 1 && first
        ? `${first.field}: ${first.detail ?? first.code}`
        : `${formatCount(total)} fields failed validation` +
          (unlisted > 0
            ? `: the first ${entries.length} are listed … and ${formatCount(unlisted)} more.`
            : '.'),
    errors: entries,
  });
}
