import type { Request, RequestHandler } from 'express';
import {
  type ApiKeyAuthOptions,
  apiKeyAuthenticator,
  insufficientScope,
  type Principal,
} from './authenticate';
import { hasScope } from './scope';

declare global {
  namespace Express {
    interface Request {
      /** Set by `apiKeyAuth()`: who is calling. */
      principal?: Principal;
    }
  }
}

/**
 * Resolves `Authorization: Bearer <key>` to a {@link Principal} at `req.principal`, or passes
 * 401 `unauthenticated` with its `WWW-Authenticate` challenge to the error middleware: the same
 * rules, cache and failure limit as the Hono door (`apiKeyAuthenticator`).
 *
 * @example
 * ```ts
 * app.use('/v1', apiKeyAuth({ store: dbApiKeyStore(fromPg(pool)), realm: 'acme' }));
 * ```
 */
export function apiKeyAuth(options: ApiKeyAuthOptions<Request>): RequestHandler {
  const authenticate = apiKeyAuthenticator(options);
  return async (req, _res, next) => {
    // A refusal rejects: Express 5 hands it to the error middleware.
    req.principal = await authenticate(req.get('authorization'), req);
    next();
  };
}

/**
 * 403 `forbidden` (`insufficient_scope`) unless the caller's key holds `scope`. Runs after
 * {@link apiKeyAuth}; without a principal it is 401 first.
 *
 * @example
 * ```ts
 * app.post('/v1/orders', requireScope('orders:write'), handler);
 * ```
 */
export function requireScope(scope: string, options: { readonly realm?: string } = {}): RequestHandler {
  return (req, _res, next) => {
    const principal = req.principal;
    if (!principal || !hasScope(principal, scope)) throw insufficientScope(scope, options);
    next();
  };
}
