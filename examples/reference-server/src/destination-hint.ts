import { isProblemError } from '@holdfast/problem-details';
import { problemResponse } from '@holdfast/problem-details/hono';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './context';
import { problem } from './problems';

/** The refusals a local development setup meets (a loopback, private or `.local` host), not scheme or credential errors. */
const LOCAL_REFUSAL = /names a local or internal host|the host is |the host name resolves to /;

/** What the 422 adds outside production mode (CONTRACT section 6: the flag is for development and tests). */
const PRIVATE_DESTINATIONS_HINT =
  ' For local development and tests, start the server with HOLDFAST_ALLOW_PRIVATE_DESTINATIONS=1 to allow private and loopback destinations (never in production mode).';

/**
 * Outside production mode, a `destination_url_forbidden` for a local or private host names the
 * flag that allows it, so a developer registering `http://127.0.0.1:4000/hooks` learns the fix
 * from the answer itself. Production answers are unchanged: they must not invite the flag.
 *
 * @example
 * ```ts
 * v1.use(destinationHint(config.production));
 * ```
 */
export function destinationHint(production: boolean): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    const error = c.error;
    if (production || !isProblemError(error) || error.code !== 'destination_url_forbidden') return;
    if (!LOCAL_REFUSAL.test(error.detail) || error.detail.includes('HOLDFAST_ALLOW_PRIVATE_DESTINATIONS'))
      return;
    c.res = problemResponse(
      c,
      problem('destination_url_forbidden', {
        detail: `${error.detail}${PRIVATE_DESTINATIONS_HINT}`,
        errors: [...error.errors],
      }),
    );
  };
}
