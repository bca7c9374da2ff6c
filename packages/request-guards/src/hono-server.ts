import {
  createServer,
  type IncomingMessage,
  type OutgoingHttpHeader,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { ProblemError } from '@holdfast/problem-details';
import { getRequestListener } from '@hono/node-server';
import { limitConnectionsPerAddress } from './address-cap';
import { type BackpressureOptions, withBackpressure } from './backpressure';
import { answerClientErrors, httpFramingProblems } from './client-error';
import { answerHttpEdges, answerProblem, refuseAtTheEdge } from './edges';
import { newRequestId } from './opaque-id';

/** Limits against slow and greedy clients. */
export interface HttpLimits {
  /** All request headers within this, else 408 `request_timeout`. */
  readonly headersTimeoutMs: number;
  /** The whole request within this, else 408 `request_timeout`. */
  readonly requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  readonly keepAliveTimeoutMs: number;
  /** Concurrent connections at most; more are closed at once. */
  readonly maxConnections: number;
  /**
   * Concurrent connections one client (an IPv4 /24, an IPv6 /64) may hold; more are answered 503
   * and closed at once ({@link limitConnectionsPerAddress}). @defaultValue a quarter of
   * `maxConnections`, at least 1
   */
  readonly maxConnectionsPerAddress?: number;
  /** The prefix IPv4 clients are grouped by for `maxConnectionsPerAddress`. @defaultValue 24 */
  readonly ipv4PrefixLength?: number;
}

/** Options of {@link createHonoServer}. */
export interface HonoServerOptions {
  /** The host the adapter builds request URLs with when `Host` is absent or unusable. */
  readonly hostname: string;
  /** Timeouts and a connection cap; absent: Node's defaults. */
  readonly limits?: HttpLimits;
  /** The service's base of problem `type` URIs (see `ProblemContext.typeBase`). @defaultValue relative `/problems/` */
  readonly typeBase?: string;
  /**
   * How many unanswered requests and unsent answer bytes one connection may hold before it is
   * no longer read, then closed ({@link withBackpressure}). Always on. @defaultValue
   * `{ maxPipelined: 16, maxUnsentBytes: 1 MiB }`
   */
  readonly backpressure?: BackpressureOptions;
}

/** The messages `@hono/node-server` refuses a request with, in the client's terms. */
const REFUSALS: Readonly<Record<string, string>> = {
  'Invalid host header': 'The Host header is not a valid host and port.',
  'Backslash in request path': 'The request path contains a backslash.',
  'Unsupported scheme': 'The request target names a scheme other than http or https.',
};

/** A problem's status, headers and body, with a fresh request id and the target's path. */
function render(problem: ProblemError, target: string | undefined, typeBase: string | undefined) {
  const instance = pathOf(target);
  const context = {
    ...(instance === undefined ? {} : { instance }),
    requestId: newRequestId(),
    ...(typeBase === undefined ? {} : { typeBase }),
  };
  const headers = problem.responseHeaders(context);
  headers.set('X-Content-Type-Options', 'nosniff');
  return { status: problem.status, headers, body: JSON.stringify(problem.toJSON(context)) };
}

/** The path of a request target, for `instance`; nothing when the target is not origin-form. */
function pathOf(target: string | undefined): string | undefined {
  if (!target?.startsWith('/') || target.length > 2048) return undefined;
  return target.split(/[?#]/, 1)[0];
}

/**
 * Drops the `Content-Type` that `@hono/node-server` gives every response lacking one from a 204
 * or 304: they have no content to type (RFC 9110 sections 15.3.5 and 15.4.5), and the OpenAPI
 * document declares none.
 */
function bodylessWithoutContentType(outgoing: ServerResponse): void {
  const writeHead: (
    status: number,
    message: string,
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ) => ServerResponse = outgoing.writeHead;
  outgoing.writeHead = function (
    this: ServerResponse,
    status: number,
    message?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ) {
    const record = typeof message === 'string' ? headers : message;
    if ((status === 204 || status === 304) && record && !Array.isArray(record)) {
      for (const name of Object.keys(record)) if (name.toLowerCase() === 'content-type') delete record[name];
    }
    return writeHead.call(
      this,
      status,
      typeof message === 'string' ? message : (STATUS_CODES[status] ?? ''),
      record,
    );
  };
}

/**
 * A Node HTTP server for a fetch handler (a Hono app's `app.fetch`) through `@hono/node-server`.
 * Everything refused before the app runs is problem+json with a `Request-Id` too, never Node's
 * or the adapter's bare 400: what Node's parser refuses ({@link answerClientErrors}: headers over
 * 16 KiB, malformed HTTP, unknown methods as 501, timeouts as 408), an HTTP/1.1 request without
 * `Host` (RFC 9112 section 3.2: 400), framing the app must not see (content codings 415,
 * transfer codings 501), `Expect` and `CONNECT` (417, 501, and `100 Continue` only once the app
 * reads the body), and targets the adapter
 * cannot turn into a URL (a backslash in the path, an invalid `Host`, `*`). No connection queues
 * more than a bounded number of unanswered pipelined requests ({@link withBackpressure}). With
 * `limits`, one client (an IPv4 /24, an IPv6 /64) holds at most `maxConnectionsPerAddress`
 * connections, and the last quarter of `maxConnections` is kept for clients holding few
 * ({@link limitConnectionsPerAddress}).
 *
 * @example
 * ```ts
 * const server = createHonoServer(app.fetch, { hostname: '127.0.0.1' });
 * server.listen(3000, '127.0.0.1');
 * ```
 */
export function createHonoServer(
  fetch: (request: Request) => Response | Promise<Response>,
  options: HonoServerOptions,
): Server {
  const { hostname, limits, typeBase, backpressure } = options;
  // Every answer given before the app (framing, edges, the address cap) names types under the same base.
  const edgeOptions = typeBase === undefined ? {} : { typeBase };
  // The target being adapted: the adapter calls errorHandler synchronously, inside listener().
  let target: string | undefined;
  const listener = getRequestListener(fetch, {
    hostname,
    errorHandler: (error) => {
      const message = error instanceof Error ? error.message : '';
      const detail = REFUSALS[message] ?? 'The request target cannot be read as a URL.';
      const { status, headers, body } = render(
        httpFramingProblems.create('malformed_request', { detail }),
        target,
        typeBase,
      );
      return new Response(body, { status, headers });
    },
  });
  // Node answers a missing Host itself, with an empty 400: checked here instead.
  // Slow clients: past headersTimeout or requestTimeout Node's parser gives up and
  // answerClientErrors() answers 408 problem+json and closes. Node checks these every
  // connectionsCheckingInterval, so that is kept well under the timeouts.
  const timeouts = limits && {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
  };
  const server = createServer(
    { requireHostHeader: false, ...timeouts },
    withBackpressure((incoming: IncomingMessage, outgoing: ServerResponse) => {
      if (incoming.httpVersion === '1.1' && incoming.headers.host === undefined) {
        const detail = 'HTTP/1.1 requests must carry a Host header.';
        answerProblem(
          incoming,
          outgoing,
          httpFramingProblems.create('malformed_request', { detail }),
          edgeOptions,
        );
        return;
      }
      const refusal = refuseAtTheEdge(incoming);
      if (refusal) {
        answerProblem(incoming, outgoing, refusal, edgeOptions);
        return;
      }
      target = incoming.url;
      bodylessWithoutContentType(outgoing);
      try {
        void listener(incoming, outgoing);
      } finally {
        target = undefined;
      }
    }, backpressure),
  );
  answerClientErrors(server, edgeOptions);
  answerHttpEdges(server, edgeOptions);
  if (limits) {
    server.maxConnections = limits.maxConnections;
    const maxPerAddress =
      limits.maxConnectionsPerAddress ?? Math.max(1, Math.floor(limits.maxConnections / 4));
    // The last quarter of maxConnections is kept for clients holding few connections.
    limitConnectionsPerAddress(server, {
      maxPerAddress,
      maxConnections: limits.maxConnections,
      ...(limits.ipv4PrefixLength === undefined ? {} : { ipv4PrefixLength: limits.ipv4PrefixLength }),
      ...edgeOptions,
    });
  }
  return server;
}
