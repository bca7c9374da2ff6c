import type { Context, MiddlewareHandler } from 'hono';
import {
  type ApiKeyAuthOptions,
  apiKeyAuthenticator,
  insufficientScope,
  type Principal,
} from './authenticate';
import { hasScope } from './scope';

/** Hono's environment after {@link apiKeyAuth}: `c.get('principal')`. */
export interface ApiKeyEnv {
  Variables: { principal: Principal };
}

/**
 * Resolves `Authorization: Bearer <key>` to a {@link Principal} at `c.get('principal')`, or
 * answers 401 `unauthenticated` with `WWW-Authenticate: Bearer` (RFC 6750 section 3: no error
 * code when no credentials came, `invalid_token` when a key came but is malformed or unknown).
 * Known keys are cached for `cacheMs`, so the hot path costs no lookup and a deleted key stops
 * working within that time; a key not in the cache is looked up, so a key created while the
 * server runs works at once; unknown keys are remembered for 1 s (at most 10,000 of them).
 *
 * @example
 * ```ts
 * app.use('/v1/*', apiKeyAuth({ store: dbApiKeyStore(fromPg(pool)), realm: 'acme' }));
 * ```
 */
export function apiKeyAuth<E extends ApiKeyEnv = ApiKeyEnv>(
  options: ApiKeyAuthOptions<Context>,
): MiddlewareHandler<E> {
  const authenticate = apiKeyAuthenticator(options);
  return async (c, next) => {
    c.set('principal', await authenticate(c.req.header('authorization'), c));
    await next();
  };
}

/**
 * 403 `forbidden` unless the caller's key holds `scope`. Runs after {@link apiKeyAuth}, so an
 * unauthenticated request gets 401 first and never learns anything from a 403.
 *
 * @example
 * ```ts
 * app.post('/v1/orders', requireScope('orders:write'), handler);
 * ```
 */
export function requireScope<E extends ApiKeyEnv = ApiKeyEnv>(
  scope: string,
  options: { readonly realm?: string } = {},
): MiddlewareHandler<E> {
  return async (c, next) => {
    if (!hasScope(c.get('principal'), scope)) throw insufficientScope(scope, options);
    await next();
  };
}
