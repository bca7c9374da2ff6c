import type { MiddlewareHandler } from 'hono';
import { nulProblem } from './nul';

/**
 * Refuses U+0000 in the path (404 `not_found`: no resource has one) and in query parameter
 * names and values (400 `validation_failed`, code `invalid_characters`), by `nulProblem`.
 *
 * @example
 * ```ts
 * app.use(jsonBody({ maxBytes: 1024 * 1024 }));
 * app.use(refuseNul());
 * ```
 */
export function refuseNul(): MiddlewareHandler {
  return async (c, next) => {
    const refused = nulProblem(c.req.url);
    if (refused) throw refused;
    await next();
  };
}
