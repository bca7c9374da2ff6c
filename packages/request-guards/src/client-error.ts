import {
  defineProblems,
  holdfastProblems,
  type ProblemCatalogue,
  type ProblemError,
} from '@holdfast/problem-details';
import { newRequestId } from './opaque-id';

/**
 * Problems Node's HTTP parser finds before any framework sees the request: a request line or
 * headers over `maxHeaderSize`, a request that did not arrive within `requestTimeout`, bytes
 * that are not HTTP/1.1. Their `type` URIs share the contract catalogue's base.
 */
export const httpFramingDefinitions = {
  malformed_request: { status: 400, title: 'Malformed HTTP request' },
  request_timeout: { status: 408, title: 'Request timeout' },
  header_fields_too_large: { status: 431, title: 'Request header fields too large' },
} as const;

/**
 * The catalogue of {@link httpFramingDefinitions}, for answering the same problems where a
 * server adapter (rather than Node's parser) refuses a request, such as a missing `Host`.
 *
 * @example
 * ```ts
 * httpFramingProblems.create('malformed_request', { detail: 'HTTP/1.1 requests must carry Host.' });
 * ```
 */
export const httpFramingProblems: ProblemCatalogue<typeof httpFramingDefinitions> =
  defineProblems(httpFramingDefinitions);
const encoder = new TextEncoder();

const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Content Too Large',
  431: 'Request Header Fields Too Large',
};

/** What `server.on('clientError')` hands over: Node's parser error. */
export interface ClientError extends Error {
  code?: string;
  /** The bytes the parser was given; their request line names the path when it is readable. */
  rawPacket?: unknown;
}

/** The part of a `net.Socket` the handler uses. */
export interface ClientErrorSocket {
  readonly writable: boolean;
  end(data: string): void;
  destroy(): void;
}

export interface ClientErrorOptions {
  /** Header that carries the request id. @defaultValue `'Request-Id'` */
  requestIdHeader?: string;
  /** Request id generator. @defaultValue {@link newRequestId} */
  generateRequestId?: () => string;
}

function problemFor(code: string | undefined): ProblemError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return httpFramingProblems.create('header_fields_too_large', {
        detail:
          'The request line and headers together exceed what this server accepts; send a shorter URL or fewer headers.',
      });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADERS_TIMEOUT':
      return httpFramingProblems.create('request_timeout', { detail: 'The request did not arrive in time.' });
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return holdfastProblems.create('payload_too_large', { detail: 'The chunk extensions are too large.' });
    default:
      return httpFramingProblems.create('malformed_request', {
        detail: 'The request is not well-formed HTTP/1.1.',
      });
  }
}

/** The path of the request line, if the parser got that far and it is a sane origin-form path. */
function pathOf(rawPacket: unknown): string | undefined {
  if (!(rawPacket instanceof Uint8Array)) return undefined;
  const head = new TextDecoder('latin1').decode(rawPacket.subarray(0, 2100));
  // Visible ASCII but `?` and `#`, at most 2 KiB: a longer path is not echoed.
  return /^[A-Z]{1,20} (\/[\x21\x22\x24-\x3e\x40-\x7e]{0,2047})[ ?#\r\n]/.exec(head)?.[1];
}

/** What `server.on('request')` hands over that the handler reads: the request's socket. */
export interface RequestOnSocket {
  readonly socket: object;
}

/** The part of Node's `ServerResponse` the handler reads. */
export interface ResponseInFlight {
  readonly headersSent: boolean;
  once(event: 'finish' | 'close', listener: () => void): unknown;
}

/** The part of Node's `http.Server` (or `https.Server`) {@link answerClientErrors} listens on. */
export interface ClientErrorServer {
  on(event: 'request', listener: (request: RequestOnSocket, response: ResponseInFlight) => void): unknown;
  on(event: 'clientError', listener: (error: ClientError, socket: ClientErrorSocket) => void): unknown;
}

/**
 * Makes `server` answer what Node's parser refuses (an empty `400`/`408`/`431` before any
 * framework runs) as `application/problem+json` with a fresh `Request-Id`, `instance` set to
 * the request path when the request line names one, and `Connection: close`.
 *
 * Node's `clientError` event hands over only the socket, and a keep-alive socket may still be
 * sending the answer to an earlier request. So the responses in flight are followed through
 * the public `request` event, and nothing is written to a socket whose response has already
 * started (that would splice a second response into the first: the socket is closed instead),
 * nor to one that is closed.
 *
 * @example
 * ```ts
 * import { serve } from '@hono/node-server';
 * import { answerClientErrors } from '@holdfast/request-guards';
 * const server = serve({ fetch: app.fetch, port: 3000 });
 * answerClientErrors(server);
 * ```
 */
export function answerClientErrors(server: ClientErrorServer, options: ClientErrorOptions = {}): void {
  const header = options.requestIdHeader ?? 'Request-Id';
  const generate = options.generateRequestId ?? newRequestId;
  const responding = new WeakMap<object, ResponseInFlight>();
  server.on('request', (request, response) => {
    const socket = request.socket;
    responding.set(socket, response);
    const done = () => {
      if (responding.get(socket) === response) responding.delete(socket);
    };
    response.once('finish', done);
    response.once('close', done);
  });
  server.on('clientError', (error, socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable || responding.get(socket)?.headersSent) {
      socket.destroy();
      return;
    }
    const problem = problemFor(error.code);
    const requestId = generate();
    const instance = pathOf(error.rawPacket);
    const body = JSON.stringify(
      problem.toJSON(instance === undefined ? { requestId } : { instance, requestId }),
    );
    const lines = [
      `HTTP/1.1 ${problem.status} ${REASONS[problem.status] ?? 'Error'}`,
      'Content-Type: application/problem+json',
      `Content-Length: ${encoder.encode(body).length}`,
      `${header}: ${requestId}`,
      'X-Content-Type-Options: nosniff',
      'Connection: close',
    ];
    socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
  });
}
