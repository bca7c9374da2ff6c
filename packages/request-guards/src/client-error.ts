import {
  defineProblems,
  holdfastProblems,
  type ProblemCatalogue,
  type ProblemError,
} from '@holdfast/problem-details';
import { newRequestId } from './opaque-id';
import { rawProblemResponse } from './raw-response';

// Codes, statuses and titles of what the edge refuses; one catalogue below serves them all.
const framing = {
  malformed_request: { status: 400, title: 'Malformed HTTP request' },
  request_timeout: { status: 408, title: 'Request timeout' },
  expectation_failed: { status: 417, title: 'Expectation failed' },
  header_fields_too_large: { status: 431, title: 'Request header fields too large' },
  not_implemented: { status: 501, title: 'Not implemented' },
} as const;

/**
 * Problems Node's HTTP parser finds before any framework sees the request: a request line or
 * headers over `maxHeaderSize` (431 `header_fields_too_large`), a request that did not arrive
 * within `requestTimeout` (408 `request_timeout`), bytes that are not HTTP/1.1 (400
 * `malformed_request`); and what no route should ever see: an `Expect` other than
 * `100-continue` (417 `expectation_failed`), a method or transfer coding the server does not
 * implement (501 `not_implemented`). Their `type` URIs share the shared catalogue's base. Use
 * `create(code, init)` where a server adapter (rather than Node's parser) refuses a request, such
 * as a missing `Host`, and `definitions` to list them in a service's problem pages.
 */
export const httpFramingProblems: ProblemCatalogue<typeof framing> = defineProblems(framing);

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
  /** The service's base of problem `type` URIs (see `ProblemContext.typeBase`). @defaultValue relative `/problems/` */
  typeBase?: string;
}

const malformed = (): ProblemError =>
  httpFramingProblems.create('malformed_request', { detail: 'The request is not well-formed HTTP/1.1.' });

/** Whether the bytes open with a request line (`token SP target SP HTTP/1.x`), whatever the method. */
function isRequestLine(rawPacket: unknown): boolean {
  if (!(rawPacket instanceof Uint8Array)) return false;
  const head = new TextDecoder('latin1').decode(rawPacket.subarray(0, 2100));
  return /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32} [\x21-\x7e]+ HTTP\/1\.[01]\r?\n/.test(head);
}

function problemFor(code: string | undefined, rawPacket: unknown): ProblemError {
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
    // A well-formed request line whose method is outside llhttp's table names a method no
    // resource here supports (RFC 9110 section 15.6.2); other bytes are simply not HTTP.
    case 'HPE_INVALID_METHOD':
      if (!isRequestLine(rawPacket)) return malformed();
      return httpFramingProblems.create('not_implemented', {
        detail: 'The request method is not one this server implements.',
      });
    default:
      return malformed();
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
    const instance = pathOf(error.rawPacket);
    socket.end(
      rawProblemResponse(problemFor(error.code, error.rawPacket), {
        header,
        requestId: generate(),
        instance,
        typeBase: options.typeBase,
      }),
    );
  });
}
