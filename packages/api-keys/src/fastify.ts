import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  type ApiKeyAuthOptions,
  apiKeyAuthenticator,
  insufficientScope,
  type Principal,
} from './authenticate';
import { hasScope } from './scope';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `apiKeyAuth()`: who is calling. */
    principal?: Principal;
  }
}

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * An `onRequest` hook resolving `Authorization: Bearer <key>` to a {@link Principal} at
 * `request.principal`, or throwing 401 `unauthenticated` with its `WWW-Authenticate` challenge
 * for the error handler: the same rules, cache and failure limit as the Hono door.
 *
 * @example
 * ```ts
 * app.addHook('onRequest', apiKeyAuth({ store: dbApiKeyStore(fromPg(pool)), realm: 'acme' }));
 * ```
 */
export function apiKeyAuth(options: ApiKeyAuthOptions<FastifyRequest>): Hook {
  const authenticate = apiKeyAuthenticator(options);
  return async (request) => {
    const header = request.headers.authorization;
    request.principal = await authenticate(header, request);
  };
}

/**
 * A hook (`preHandler` of a route) answering 403 `forbidden` (`insufficient_scope`) unless the
 * caller's key holds `scope`. Runs after {@link apiKeyAuth}.
 *
 * @example
 * ```ts
 * app.post('/v1/orders', { preHandler: requireScope('orders:write') }, handler);
 * ```
 */
export function requireScope(scope: string, options: { readonly realm?: string } = {}): Hook {
  return async (request) => {
    const principal = request.principal;
    if (!principal || !hasScope(principal, scope)) throw insufficientScope(scope, options);
  };
}
