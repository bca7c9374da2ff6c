import { toProblemResponse } from '@holdfast/problem-details';
import { newRequestId } from './opaque-id';

// The framework-neutral core of request ids: every door gives each request a fresh id from
// `generate` and sends it in `header` on every response. An incoming id is never adopted: a
// client could otherwise forge entries in the server's logs.

/** How every door names and makes request ids. */
export interface RequestIdOptions {
  /** Header that carries the id. @defaultValue `'Request-Id'` */
  header?: string;
  /** Id generator. @defaultValue {@link newRequestId} */
  generate?: () => string;
}

/**
 * The header and generator every door resolves once from {@link RequestIdOptions}.
 *
 * @example
 * ```ts
 * const { header, generate } = requestIdSettings({ header: 'X-Request-Id' });
 * ```
 */
export function requestIdSettings(options: RequestIdOptions = {}): {
  readonly header: string;
  readonly generate: () => string;
} {
  return { header: options.header ?? 'Request-Id', generate: options.generate ?? newRequestId };
}

/** Options of {@link withRequestId}. */
export interface WithRequestIdOptions extends RequestIdOptions {
  /** The service's base of problem `type` URIs, for the problems of thrown errors. */
  typeBase?: string;
  /** Called with the original error of every 5xx, for the server's own logs (never the response). */
  log?: (error: unknown, requestId: string) => void;
}

/**
 * A Fetch handler (Next.js, Bun, Deno, Workers) with a request id: `handler` gets a fresh id;
 * every response, its own or the problem of what it threw (`ProblemError` as it is, anything else
 * a 500 that reveals nothing, both carrying `requestId`), leaves with the id in `header`.
 *
 * @example
 * ```ts
 * export const GET = withRequestId((request, requestId) => Response.json({ requestId }));
 * ```
 */
export function withRequestId(
  handler: (request: Request, requestId: string) => Response | Promise<Response>,
  options: WithRequestIdOptions = {},
): (request: Request) => Promise<Response> {
  const { header, generate } = requestIdSettings(options);
  const { typeBase, log } = options;
  return async (request) => {
    const id = generate();
    let response: Response;
    try {
      response = await handler(request, id);
    } catch (error) {
      response = toProblemResponse(error, request, {
        requestId: id,
        ...(typeBase === undefined ? {} : { typeBase }),
        ...(log === undefined ? {} : { log: (thrown: unknown) => log(thrown, id) }),
      });
    }
    if (response.headers.has(header)) return response;
    try {
      response.headers.set(header, id);
      return response;
    } catch {
      // Immutable headers (a fetch() result, Response.redirect): answer with a copy.
      const copy = new Response(response.body, response);
      copy.headers.set(header, id);
      return copy;
    }
  };
}
