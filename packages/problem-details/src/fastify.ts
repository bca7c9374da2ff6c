import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fromUnknown } from './from-unknown';
import { allowedBy, checkTypeBase, notFoundOrNotAllowed, problemForStatus } from './http';
import type { ProblemContext, ProblemError } from './problem-error';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The request's id, rendered in problem bodies when a request-id hook set it
     * (`requestId()` from `@holdfast/request-guards/fastify` does).
     */
    requestId?: string;
    /** Set by `problemTypeBase()`: the service's base of problem `type` URIs. */
    problemTypeBase?: string;
  }
}

function pathOf(request: FastifyRequest): string {
  const url = request.url;
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * `instance` (the path) and `requestId` for a problem raised while handling `request`.
 *
 * @example
 * ```ts
 * return reply.send(problem('not_found').toResponse(problemContext(request)));
 * ```
 */
function problemContext(request: FastifyRequest): ProblemContext {
  const { requestId, problemTypeBase: typeBase } = request;
  return {
    instance: pathOf(request),
    ...(requestId === undefined ? {} : { requestId }),
    ...(typeBase === undefined ? {} : { typeBase }),
  };
}

/**
 * The one setting that puts every problem `type` of an app under the service's own base: an
 * `onRequest` hook, so problems built with the default base (relative `/problems/<code>`, the
 * codes of every Holdfast package) render as `<base><code>` in `onProblem()`,
 * `notFoundProblem()` and every package door that renders a problem itself. Add it on the root instance. Without it, types stay relative and
 * resolve against the API's own URL (RFC 9457 section 3.1.1).
 *
 * @example
 * ```ts
 * app.addHook('onRequest', problemTypeBase('https://api.example.com/problems/'));
 * ```
 */
export function problemTypeBase(base: string): (request: FastifyRequest) => Promise<void> {
  checkTypeBase(base);
  return async (request) => {
    request.problemTypeBase = base;
  };
}

/**
 * Sends `error` as the `application/problem+json` answer to `request`.
 *
 * @example
 * ```ts
 * app.get('/teapot', (request, reply) => sendProblem(request, reply, problem('unprocessable')));
 * ```
 */
function sendProblem(request: FastifyRequest, reply: FastifyReply, error: ProblemError): FastifyReply {
  return reply.send(error.toResponse(problemContext(request)));
}

/**
 * Maps a thrown value to a problem: `ProblemError` as is, Fastify's own errors (`FST_` codes,
 * schema validation, its JSON parser) by status, with the catalogue's wording, anything else as
 * 500 `internal_error` that reveals nothing.
 *
 * @example
 * ```ts
 * const p = toProblem(error); // a body over bodyLimit: payload_too_large
 * ```
 */
function toProblem(error: unknown): ProblemError {
  const fastifyError = error as Partial<FastifyError> | undefined;
  if (
    error instanceof Error &&
    typeof fastifyError?.statusCode === 'number' &&
    (fastifyError.code?.startsWith('FST_') === true || fastifyError.validation !== undefined)
  ) {
    const converted = problemForStatus(fastifyError.statusCode, error);
    if (converted) return converted;
  }
  return fromUnknown(error);
}

interface OnProblemOptions {
  /**
   * Called with the original error of every 5xx, for the server's own logs (never the
   * response). @defaultValue `request.log.error`
   */
  log?: (error: unknown, request: FastifyRequest) => void;
}

/**
 * The error handler: every error leaves as `application/problem+json`, and a 500 carries no
 * message, stack, SQL, host name or version.
 *
 * @example
 * ```ts
 * app.setErrorHandler(onProblem());
 * ```
 */
export function onProblem(
  options: OnProblemOptions = {},
): (error: unknown, request: FastifyRequest, reply: FastifyReply) => FastifyReply {
  const log =
    options.log ??
    ((error: unknown, request: FastifyRequest) => {
      request.log.error({ err: error, requestId: request.requestId }, 'request failed');
    });
  return (error, request, reply) => {
    const converted = toProblem(error);
    if (converted.status >= 500) log(error, request);
    return sendProblem(request, reply, converted);
  };
}

/** The part of a Fastify instance `notFoundProblem` reads. */
type RoutedApp = Pick<FastifyInstance, 'findRoute'>;

/**
 * The methods with a route at `path`, `HEAD` included where `GET` is.
 *
 * @example
 * ```ts
 * allowedMethods(app, '/v1/orders'); // ['GET', 'HEAD', 'POST']
 * ```
 */
function allowedMethods(app: RoutedApp, path: string): string[] {
  return allowedBy((method) => app.findRoute({ method, url: path }) !== null);
}

/**
 * The not-found handler: 405 `method_not_allowed` with `Allow` when the path exists under other
 * methods, else 404 `not_found`; both as problem+json.
 *
 * @example
 * ```ts
 * app.setNotFoundHandler(notFoundProblem(app));
 * ```
 */
export function notFoundProblem(
  app?: RoutedApp,
): (request: FastifyRequest, reply: FastifyReply) => FastifyReply {
  return (request, reply) => {
    const path = pathOf(request);
    const allowed = app ? allowedMethods(app, path) : [];
    return sendProblem(request, reply, notFoundOrNotAllowed(request.method, path, allowed));
  };
}
