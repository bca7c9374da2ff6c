import { problem } from '@holdfast/problem-details';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './context';

// PostgreSQL text and jsonb cannot hold U+0000 (SQLSTATE 22021 / 22P05), so a NUL character
// from a client would surface as a 500. Refused up front for every route: a path containing
// one names nothing (404); in a query parameter it is 400 validation_failed. Bodies follow the
// same text rule inside jsonBody() (problem-details), which also turns lone surrogates into
// U+FFFD and refuses `__proto__` keys (CONTRACT section 10).

const NUL = '\u0000';
const refuse = (field: string) =>
  problem('validation_failed', {
    detail: 'The query contains a NUL character (U+0000), which is never valid here.',
    errors: [
      {
        field,
        code: 'invalid_characters',
        detail: 'Must not contain U+0000.',
      },
    ],
  });

/**
 * Refuses U+0000 in the path (404) and in query parameters (400).
 *
 * @example
 * ```ts
 * v1.use(jsonBody({ maxBytes: 1024 * 1024 }));
 * v1.use(refuseNul());
 * ```
 */
export function refuseNul(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (/%00/i.test(c.req.path) || c.req.path.includes(NUL)) {
      throw problem('not_found', { detail: 'No resource has a NUL character in its path.' });
    }
    if (c.req.url.includes('?')) {
      for (const [name, values] of Object.entries(c.req.queries())) {
        if (name.includes(NUL) || values.some((v) => v.includes(NUL))) throw refuse(name);
      }
    }
    await next();
  };
}
