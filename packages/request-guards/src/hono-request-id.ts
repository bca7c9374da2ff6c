import { fromUnknown } from '@holdfast/problem-details';
import type { MiddlewareHandler } from 'hono';
import { type RequestIdOptions, requestIdSettings } from './request-id';

declare module 'hono' {
  interface ContextVariableMap {
    /** Set by `requestId()`: the id sent as `Request-Id` and rendered in problem bodies. */
    requestId: string;
    /** Set by `problemTypeBase()` of `@holdfast/problem-details/hono`: the service's base of problem `type` URIs. */
    problemTypeBase: string;
  }
}

/**
 * Gives every request an id, available as `c.get('requestId')`, and sets the `Request-Id`
 * header on every response, success or failure. Incoming ids are not
 * trusted: a client could otherwise forge entries in the server's logs. Register it first.
 *
 * @example
 * ```ts
 * const app = new Hono();
 * app.use(requestId());
 * app.onError(onProblem());
 * app.notFound(notFoundProblem(app));
 * ```
 */
export function requestId(options: RequestIdOptions = {}): MiddlewareHandler {
  const { header, generate } = requestIdSettings(options);
  return async (c, next) => {
    const id = generate();
    c.set('requestId', id);
    // Set before the handler runs, Hono passes it into every response it builds (HEAD included)
    // without rebuilding one afterwards, which would cost a copy of the body per request.
    c.header(header, id);
    try {
      await next();
    } catch (thrown) {
      // Hono hands only Error instances to onError and re-throws anything else; answer those
      // here, as a 500 problem that reveals nothing, instead of the server's bare text.
      const typeBase: string | undefined = c.get('problemTypeBase');
      c.res = fromUnknown(thrown).toResponse({
        instance: c.req.path,
        requestId: id,
        ...(typeBase === undefined ? {} : { typeBase }),
      });
    }
    // A handler that returned its own Response skipped the prepared headers.
    if (!c.res.headers.has(header)) c.res.headers.set(header, id);
  };
}
