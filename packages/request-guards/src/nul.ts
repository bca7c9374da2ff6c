import { type ProblemError, problem } from '@holdfast/problem-details';

// PostgreSQL text and jsonb cannot hold U+0000 (SQLSTATE 22021 / 22P05), so a NUL character
// from a client would surface as a 500. The JSON body guards apply the text rule to bodies; this
// applies it to the path and the query.
const NUL = '\u0000';
const ENCODED_NUL = /%00/i;

function inQuery(field: string): ProblemError {
  return problem('validation_failed', {
    detail: 'The query contains a NUL character (U+0000), which is never valid here.',
    errors: [{ field, code: 'invalid_characters', detail: 'Must not contain U+0000.' }],
  });
}

/**
 * The problem for U+0000 in a request URL, or `undefined` when it has none: in the path, 404
 * `not_found` (no resource has one); in a query parameter's name or value, 400
 * `validation_failed` (`invalid_characters`) naming it. A URL given as text is parsed only when it
 * holds `%00` or U+0000 at all. What every door's `refuseNul()` runs, and a Fetch handler calls.
 *
 * @example
 * ```ts
 * const refused = nulProblem(request.url);
 * if (refused) return refused.toResponse({ instance: new URL(request.url).pathname });
 * ```
 */
export function nulProblem(url: string | URL): ProblemError | undefined {
  if (typeof url === 'string') {
    if (!ENCODED_NUL.test(url) && !url.includes(NUL)) return undefined;
    return nulProblem(new URL(url, 'http://localhost'));
  }
  if (ENCODED_NUL.test(url.pathname) || url.pathname.includes(NUL)) {
    return problem('not_found', { detail: 'No resource has a NUL character in its path.' });
  }
  for (const [name, value] of url.searchParams) {
    if (name.includes(NUL) || value.includes(NUL)) return inQuery(name);
  }
  return undefined;
}
