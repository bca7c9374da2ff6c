import type { Context, ErrorHandler, MiddlewareHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Router } from 'hono/router';
import type { RouterRoute } from 'hono/types';
import { fromUnknown } from './from-unknown';
import { allowedBy, checkTypeBase, notFoundOrNotAllowed, problemForStatus } from './http';
import { errorLine } from './loggable-error';
import type { ProblemContext, ProblemError } from './problem-error';

declare module 'hono' {
  interface ContextVariableMap {
    /**
     * The request's id, rendered in problem bodies when a request-id middleware set it
     * (`requestId()` from `@holdfast/request-guards/hono` does).
     */
    requestId: string;
    /** Set by `problemTypeBase()`: the service's base of problem `type` URIs. */
    problemTypeBase: string;
  }
}

/**
 * `instance` and `requestId` for a problem raised while handling `c`.
 *
 * @example
 * ```ts
 * return problem('not_found').toResponse(problemContext(c));
 * ```
 */
function problemContext(c: Context): ProblemContext {
  const requestId: string | undefined = c.get('requestId');
  const typeBase: string | undefined = c.get('problemTypeBase');
  return {
    instance: c.req.path,
    ...(requestId === undefined ? {} : { requestId }),
    ...(typeBase === undefined ? {} : { typeBase }),
  };
}

/**
 * The one setting that puts every problem `type` of an app under the service's own base:
 * problems built with the default base (relative `/problems/<code>`, the codes of every
 * Holdfast package) render as `<base><code>`, in `onProblem()`, `notFoundProblem()`,
 * `problemResponse()` and every package door that renders a problem itself.
 * Register it first. Without it, types stay relative and resolve against the API's own URL
 * (RFC 9457 section 3.1.1).
 *
 * @example
 * ```ts
 * app.use(problemTypeBase('https://api.example.com/problems/'));
 * app.onError(onProblem());
 * ```
 */
export function problemTypeBase(base: string): MiddlewareHandler {
  checkTypeBase(base);
  return async (c, next) => {
    c.set('problemTypeBase', base);
    await next();
  };
}

/**
 * Renders `problem` as the response to `c`.
 *
 * @example
 * ```ts
 * app.get('/teapot', (c) => problemResponse(c, problem('unprocessable', { detail: 'No tea.' })));
 * ```
 */
export function problemResponse(c: Context, error: ProblemError): Response {
  return error.toResponse(problemContext(c));
}

/**
 * Maps a thrown value to a problem: `ProblemError` as is, Hono's `HTTPException` by status
 * (its message is not trusted to be safe, so the catalogue's wording is used), anything else
 * as 500 `internal_error` that reveals nothing.
 *
 * @example
 * ```ts
 * const p = toProblem(new HTTPException(413)); // payload_too_large
 * ```
 */
function toProblem(error: unknown): ProblemError {
  if (error instanceof HTTPException) {
    const converted = problemForStatus(error.status, error);
    if (converted) return converted;
  }
  return fromUnknown(error);
}

interface OnProblemOptions {
  /**
   * Called with the original error of every 5xx, for the server's own logs (never the
   * response). @defaultValue logs to `console.error` with the request id, the route, and
   * `errorLine(error)`: the error's name, code, message and frames, never its other properties
   * (a database error's row detail and parameters stay out of the log)
   */
  log?: (error: unknown, c: Context) => void;
}

/**
 * The error handler: every error leaves as `application/problem+json` with `Request-Id`,
 * and a 500 carries no message, stack, SQL, host name or version (RFC 9457 section 5: problem details must not leak implementation details).
 *
 * @example
 * ```ts
 * app.onError(onProblem({ log: (error, c) => logger.error({ err: error, requestId: c.get('requestId') }) }));
 * ```
 */
export function onProblem(options: OnProblemOptions = {}): ErrorHandler {
  const log =
    options.log ??
    ((error: unknown, c: Context) => {
      console.error(
        `[${c.get('requestId') ?? '-'}] ${c.req.method} ${c.req.routePath} failed: ${errorLine(error)}`,
      );
    });
  return (error, c) => {
    const converted = toProblem(error);
    if (converted.status >= 500) log(error, c);
    return problemResponse(c, converted);
  };
}

/** The part of a Hono app `notFoundProblem` reads: its router. */
interface RoutedApp {
  readonly router: Router<[unknown, RouterRoute]>;
}

/**
 * The methods with a route (not only middleware) at `path`, `HEAD` included where `GET` is.
 *
 * @example
 * ```ts
 * allowedMethods(app, '/v1/orders'); // ['GET', 'HEAD', 'POST']
 * ```
 */
function allowedMethods(app: RoutedApp, path: string): string[] {
  return allowedBy((method) => {
    const [matches] = app.router.match(method, path);
    return matches.some(([[, route]]: [[unknown, RouterRoute], unknown]) => route.method === method);
  });
}

/**
 * The not-found handler: 405 `method_not_allowed` with `Allow` when the path exists under
 * other methods (RFC 9110 section 15.5.6), else 404 `not_found`; both as problem+json.
 *
 * @example
 * ```ts
 * app.notFound(notFoundProblem(app));
 * ```
 */
export function notFoundProblem(app?: RoutedApp): NotFoundHandler {
  return (c) => {
    const allowed = app ? allowedMethods(app, c.req.path) : [];
    return problemResponse(c, notFoundOrNotAllowed(c.req.method, c.req.path, allowed));
  };
}
export { problemPages } from './problem-pages';
export { servedOnce } from './served-once';
