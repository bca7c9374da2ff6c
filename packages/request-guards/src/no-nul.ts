import { problem } from '@holdfast/problem-details';
import type { MiddlewareHandler } from 'hono';

// PostgreSQL text and jsonb cannot hold U+0000 (SQLSTATE 22021 / 22P05), so a NUL character
// from a client would surface as a 500. jsonBody() applies the text rule to bodies; this applies
// it to the path and the query.
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
 * Refuses U+0000 in the path (404 `not_found`: no resource has one) and in query parameter
 * names and values (400 `validation_failed`, code `invalid_characters`).
 *
 * @example
 * ```ts
 * app.use(jsonBody({ maxBytes: 1024 * 1024 }));
 * app.use(refuseNul());
 * ```
 */
export function refuseNul(): MiddlewareHandler {
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
