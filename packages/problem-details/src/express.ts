import { requestUrl, writeResponse } from '@holdfast/node-bridge';
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { fromUnknown } from './from-unknown';
import { allowedBy, checkTypeBase, notFoundOrNotAllowed, problemForStatus } from './http';
import type { ProblemContext, ProblemError } from './problem-error';

declare global {
  namespace Express {
    interface Request {
      /**
       * The request's id, rendered in problem bodies when a request-id middleware set it
       * (`requestId()` from `@holdfast/request-guards/express` does).
       */
      requestId?: string;
      /** Set by `problemTypeBase()`: the service's base of problem `type` URIs. */
      problemTypeBase?: string;
    }
  }
}

/**
 * `instance` (the full path, mounted routers included) and `requestId` for a problem raised
 * while handling `req`.
 *
 * @example
 * ```ts
 * await sendProblem(req, res, problem('not_found'));
 * ```
 */
function problemContext(req: Request): ProblemContext {
  const { requestId, problemTypeBase: typeBase } = req;
  return {
    instance: requestUrl(req).pathname,
    ...(requestId === undefined ? {} : { requestId }),
    ...(typeBase === undefined ? {} : { typeBase }),
  };
}

/**
 * The one setting that puts every problem `type` of an app under the service's own base:
 * problems built with the default base (relative `/problems/<code>`, the codes of every
 * Holdfast package) render as `<base><code>`, in `onProblem()`, `notFoundProblem()` and every
 * package door that renders a problem itself.
 * Register it first. Without it, types stay relative and resolve against the API's own URL
 * (RFC 9457 section 3.1.1).
 *
 * @example
 * ```ts
 * app.use(problemTypeBase('https://api.example.com/problems/'));
 * ```
 */
export function problemTypeBase(base: string): RequestHandler {
  checkTypeBase(base);
  return (req, _res, next) => {
    req.problemTypeBase = base;
    next();
  };
}

/**
 * Sends `error` as the `application/problem+json` answer to `req`.
 *
 * @example
 * ```ts
 * app.get('/teapot', (req, res) => sendProblem(req, res, problem('unprocessable', { detail: 'No tea.' })));
 * ```
 */
function sendProblem(req: Request, res: Parameters<RequestHandler>[1], error: ProblemError): Promise<void> {
  return writeResponse(res, error.toResponse(problemContext(req)));
}

/**
 * Maps a thrown value to a problem: `ProblemError` as is, an Express or body-parser HTTP error
 * (an `Error` with `status` and `expose`) by status, with the catalogue's wording, anything else
 * as 500 `internal_error` that reveals nothing.
 *
 * @example
 * ```ts
 * const p = toProblem(Object.assign(new Error('too big'), { status: 413, expose: true })); // payload_too_large
 * ```
 */
function toProblem(error: unknown): ProblemError {
  if (error instanceof Error && 'expose' in error && 'status' in error && typeof error.status === 'number') {
    const converted = problemForStatus(error.status, error);
    if (converted) return converted;
  }
  return fromUnknown(error);
}

interface OnProblemOptions {
  /**
   * Called with the original error of every 5xx, for the server's own logs (never the
   * response). @defaultValue logs to `console.error` with the request id
   */
  log?: (error: unknown, req: Request) => void;
}

/**
 * The error middleware (register it last): every error leaves as `application/problem+json`,
 * and a 500 carries no message, stack, SQL, host name or version.
 *
 * @example
 * ```ts
 * app.use(onProblem());
 * ```
 */
export function onProblem(options: OnProblemOptions = {}): ErrorRequestHandler {
  const log =
    options.log ??
    ((error: unknown, req: Request) => {
      console.error(`[${req.requestId ?? '-'}] ${req.method} ${requestUrl(req).pathname} failed:`, error);
    });
  return (error, req, res, next) => {
    // Half an answer is out: Express's own handler closes the connection.
    if (res.headersSent) return next(error);
    const converted = toProblem(error);
    if (converted.status >= 500) log(error, req);
    void sendProblem(req, res, converted);
  };
}

/** The parts of Express 5's router (the `router` package) that `allowedMethods` reads. */
interface RouterLayer {
  match(path: string): false | { path: string };
  readonly route?: { _handlesMethod(method: string): boolean };
  readonly handle?: { readonly stack?: readonly RouterLayer[] };
}

function routed(stack: readonly RouterLayer[], path: string, method: string): boolean {
  for (const layer of stack) {
    const matched = layer.match(path);
    if (!matched) continue;
    if (layer.route) {
      if (layer.route._handlesMethod(method)) return true;
      continue;
    }
    // A mounted router: look inside with the mount path cut off.
    const inner = layer.handle?.stack;
    if (inner && routed(inner, path.slice(matched.path.length) || '/', method)) return true;
  }
  return false;
}

/** The part of an Express app `notFoundProblem` reads: its router. */
interface RoutedApp {
  readonly router: unknown;
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
  const stack = (app.router as { stack?: readonly RouterLayer[] }).stack ?? [];
  return allowedBy((method) => routed(stack, path, method));
}

/**
 * The last middleware: 405 `method_not_allowed` with `Allow` when the path exists under other
 * methods, else 404 `not_found`; both as problem+json.
 *
 * @example
 * ```ts
 * app.use(notFoundProblem(app));
 * app.use(onProblem());
 * ```
 */
export function notFoundProblem(app?: RoutedApp): RequestHandler {
  return (req, res) => {
    const path = requestUrl(req).pathname;
    const allowed = app ? allowedMethods(app, path) : [];
    void sendProblem(req, res, notFoundOrNotAllowed(req.method, path, allowed));
  };
}
