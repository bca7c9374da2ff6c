import { type ProblemError, problem } from '@holdfast/problem-details';
import { idempotencyProblems } from './problems';

/**
 * Longest accepted key, in characters.
 *
 * @example
 * ```ts
 * parseIdempotencyKey('k'.repeat(MAX_KEY_LENGTH + 1)).ok; // false: 400 validation_failed
 * ```
 */
export const MAX_KEY_LENGTH: number = 255;

/** The outcome of reading an `Idempotency-Key` header. */
export type ParsedIdempotencyKey =
  | { readonly ok: true; readonly key: string | undefined }
  | { readonly ok: false; readonly error: ProblemError };

// RFC 8941 section 3.3.3: sf-string = DQUOTE *( unescaped / "\" ( DQUOTE / "\" ) ) DQUOTE,
// unescaped = %x20-21 / %x23-5B / %x5D-7E.
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;
// A bare key: visible ASCII without the characters that would make it ambiguous with a
// Structured Field string (`"`, `\`) or with two header lines folded into one (`,`).
const BARE = /^[\x21\x23-\x2b\x2d-\x5b\x5d-\x7e]+$/;

function invalid(detail: string, code: string): ProblemError {
  return problem('validation_failed', {
    detail,
    errors: [{ field: 'Idempotency-Key', code, detail }],
  });
}

/**
 * Reads an `Idempotency-Key` header value. The key may arrive bare (`abc`) or as a Structured
 * Field string (`"abc"`, as the IETF draft "The Idempotency-Key HTTP Header Field" writes it);
 * both name the same key `abc`. Keys are 1 to 255 characters, not all of them whitespace.
 * Absent where `required`: 400 `idempotency_key_required`; malformed or too long: 400
 * `validation_failed` naming the header (`errors[0].code`: `invalid`, `blank` for an empty or
 * whitespace-only key in any form, `too_long`). Absent and optional: `{ ok: true, key: undefined }`.
 *
 * @example
 * ```ts
 * parseIdempotencyKey('"order-42"'); // { ok: true, key: 'order-42' }
 * parseIdempotencyKey(null, { required: true }); // { ok: false, error: ProblemError idempotency_key_required }
 * ```
 */
export function parseIdempotencyKey(
  value: string | null | undefined,
  options: { required?: boolean } = {},
): ParsedIdempotencyKey {
  if (value === null || value === undefined) {
    if (!options.required) return { ok: true, key: undefined };
    return {
      ok: false,
      error: idempotencyProblems.create('idempotency_key_required', {
        detail: 'This request must carry an Idempotency-Key header.',
        errors: [{ field: 'Idempotency-Key', code: 'idempotency_key_required' }],
      }),
    };
  }
  const trimmed = value.trim();
  let key: string;
  const quoted = SF_STRING.exec(trimmed);
  if (quoted) {
    key = (quoted[1] ?? '').replace(/\\(["\\])/g, '$1');
  } else if (trimmed.startsWith('"')) {
    return {
      ok: false,
      error: invalid('Idempotency-Key is not a valid Structured Field string.', 'invalid'),
    };
  } else if (BARE.test(trimmed)) {
    key = trimmed;
  } else {
    return {
      ok: false,
      error:
        trimmed === ''
          ? invalid('Idempotency-Key is blank.', 'blank')
          : invalid(
              'Idempotency-Key must be visible ASCII without spaces, quotes, backslashes or commas, or a quoted Structured Field string.',
              'invalid',
            ),
    };
  }
  // A quoted key of spaces only (`"  "`) is as blank as an absent one: no client means it as a
  // key, and two such requests would be taken for retries of each other.
  if (key.trim() === '') return { ok: false, error: invalid('Idempotency-Key is blank.', 'blank') };
  if (key.length > MAX_KEY_LENGTH) {
    return {
      ok: false,
      error: invalid(`Idempotency-Key is longer than ${MAX_KEY_LENGTH} characters.`, 'too_long'),
    };
  }
  return { ok: true, key };
}
