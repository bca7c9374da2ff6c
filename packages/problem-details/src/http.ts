import { clipEcho } from './bounds';
import { type HoldfastProblemCode, problem } from './catalogue';
import { fromUnknown } from './from-unknown';
import type { ProblemContext, ProblemError } from './problem-error';

/**
 * The framework-neutral half of every door: what a thrown value, an unmatched path and a
 * framework's own HTTP error become. The `/hono`, `/express` and `/fastify` doors only read the
 * request and write the answer; a Fetch handler (Next.js, Bun, Deno, Workers) calls these directly.
 */

const HTTP_STATUS_CODES: Readonly<Record<number, HoldfastProblemCode>> = {
  400: 'validation_failed',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'invalid_state_transition',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'unprocessable',
};

/**
 * The problem for a framework's own HTTP error (Hono's `HTTPException`, an Express body-parser
 * error, a Fastify `FST_` error) by its status. Its message is not trusted to be safe, so the
 * catalogue's wording is used; a status with no problem of its own gives `undefined`.
 *
 * @example
 * ```ts
 * const p = problemForStatus(413, error); // payload_too_large
 * ```
 */
export function problemForStatus(status: number, cause: unknown): ProblemError | undefined {
  if (status === 429) return problem('rate_limited', { retryAfter: 1, cause });
  if (status === 503) return problem('service_unavailable', { retryAfter: 1, cause });
  const code = HTTP_STATUS_CODES[status];
  return code ? problem(code, { cause }) : undefined;
}

/** The methods a router may answer, in the order `Allow` lists them. */
export const ROUTE_METHODS: readonly string[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * The methods with a route at a path, given a test per method, `HEAD` included where `GET` is.
 *
 * @example
 * ```ts
 * allowedBy((method) => routes.has(`${method} ${path}`)); // ['GET', 'HEAD', 'POST']
 * ```
 */
export function allowedBy(hasRoute: (method: string) => boolean): string[] {
  const allowed = ROUTE_METHODS.filter(hasRoute);
  if (allowed.includes('GET')) allowed.splice(allowed.indexOf('GET') + 1, 0, 'HEAD');
  return allowed;
}

/**
 * 405 `method_not_allowed` with `Allow` when the path exists under `allowed` methods (RFC 9110
 * section 15.5.6), else 404 `not_found`.
 *
 * @example
 * ```ts
 * return notFoundOrNotAllowed(request.method, url.pathname, allowed).toResponse({ instance: url.pathname });
 * ```
 */
export function notFoundOrNotAllowed(method: string, path: string, allowed: readonly string[]): ProblemError {
  if (allowed.length > 0) {
    return problem('method_not_allowed', {
      detail: `${method} is not allowed on ${clipEcho(path)}; allowed: ${allowed.join(', ')}.`,
      headers: { Allow: allowed.join(', ') },
    });
  }
  return problem('not_found', { detail: `Nothing is found at ${clipEcho(path)}.` });
}

/** Options of {@link toProblemResponse}. */
export interface ProblemResponseOptions {
  /** The request id to render (and send as `Request-Id`). */
  readonly requestId?: string;
  /** Called with the original error of every 5xx, for the server's own logs (never the response). */
  readonly log?: (error: unknown) => void;
  /**
   * The service's base of problem `type` URIs (an absolute URI ending in `/`): types under the
   * default base render under it, as `problemTypeBase()` does in the framework doors.
   */
  readonly typeBase?: string;
}

/**
 * Throws `TypeError` unless `base` is an absolute URI ending in `/`: the check every door's
 * `problemTypeBase()` makes once, at start-up.
 *
 * @example
 * ```ts
 * checkTypeBase('https://api.example.com/problems/');
 * ```
 */
export function checkTypeBase(base: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/]/i.test(base) || !base.endsWith('/')) {
    throw new TypeError(
      `the problem type base must be an absolute URI ending in /, got ${JSON.stringify(base)}`,
    );
  }
  return base;
}

/**
 * The answer to a Fetch request whose handling threw `error`: a `ProblemError` as it is,
 * anything else a 500 `internal_error` that reveals nothing; `instance` is the request's path.
 * The error handler of a Fetch handler (Next.js, Bun, Deno, Workers).
 *
 * @example
 * ```ts
 * export async function POST(request: Request) {
 *   try { return await createOrder(request); } catch (error) { return toProblemResponse(error, request); }
 * }
 * ```
 */
export function toProblemResponse(
  error: unknown,
  request: Request,
  options: ProblemResponseOptions = {},
): Response {
  const converted = fromUnknown(error);
  if (converted.status >= 500) options.log?.(error);
  const context = problemContextOf(request, options.requestId);
  return converted.toResponse(
    options.typeBase === undefined ? context : { ...context, typeBase: options.typeBase },
  );
}

/**
 * `instance` (the path) and `requestId` for a problem raised while handling `request`.
 *
 * @example
 * ```ts
 * problem('not_found').toResponse(problemContextOf(request, 'req_1'));
 * ```
 */
export function problemContextOf(request: Request, requestId?: string): ProblemContext {
  return { instance: new URL(request.url).pathname, ...(requestId === undefined ? {} : { requestId }) };
}
