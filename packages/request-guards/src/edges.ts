import { holdfastProblems, type ProblemError } from '@holdfast/problem-details';
import { httpFramingProblems } from './client-error';
import { newRequestId } from './opaque-id';
import { rawProblemResponse } from './raw-response';

/** The part of a request {@link refuseAtTheEdge} reads: Node's `IncomingMessage` has it. */
export interface EdgeRequest {
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
}

/** The members of a comma-separated header, lower-cased, parameters and empty members dropped. */
function members(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  const text = typeof value === 'string' ? value : value.join(',');
  return text
    .split(',')
    .map((member) => (member.split(';', 1)[0] ?? '').trim().toLowerCase())
    .filter((member) => member !== '');
}

/**
 * What a request's framing asks for that this server does not do, as the problem to answer
 * before any route runs, or `undefined`:
 *
 * - a `Content-Encoding` other than `identity`: 415 `unsupported_media_type` with
 *   `Accept-Encoding: identity` (RFC 9110 sections 8.4 and 15.5.16, and 12.5.3: the response
 *   says which codings would be accepted). A body labelled `gzip` is refused rather than read as
 *   plain bytes, and one labelled `br` that is plain is refused rather than accepted.
 * - a `Transfer-Encoding` whose last coding is not `chunked`: 400 `malformed_request`, the body's
 *   length cannot be known (RFC 9112 section 6.3); one that lists any coding but `chunked`
 *   (`gzip, chunked`): 501 `not_implemented` (RFC 9112 section 6.1). Node's parser lets both
 *   through and would hand the app the still-encoded bytes.
 *
 * The answer closes the connection: the body was not read.
 *
 * @example
 * ```ts
 * refuseAtTheEdge({ headers: { 'content-encoding': 'gzip' } })?.status; // 415
 * refuseAtTheEdge({ headers: { 'transfer-encoding': 'chunked' } }); // undefined
 * ```
 */
export function refuseAtTheEdge(request: EdgeRequest): ProblemError | undefined {
  const codings = members(request.headers['transfer-encoding']);
  if (codings.length > 0) {
    if (codings.at(-1) !== 'chunked') {
      return httpFramingProblems.create('malformed_request', {
        detail: 'Transfer-Encoding must end with chunked in a request, or the body has no known length.',
      });
    }
    if (codings.some((coding) => coding !== 'chunked')) {
      return httpFramingProblems.create('not_implemented', {
        detail:
          'Only the chunked transfer coding is implemented; send the body without other transfer codings.',
      });
    }
  }
  if (members(request.headers['content-encoding']).some((coding) => coding !== 'identity')) {
    return holdfastProblems.create('unsupported_media_type', {
      detail: 'Request bodies must not be content-coded: send them without Content-Encoding (identity).',
      headers: { 'Accept-Encoding': 'identity' },
    });
  }
  return undefined;
}

/** The part of Node's `ServerResponse` the edges write to. */
export interface EdgeResponse {
  readonly headersSent: boolean;
  writeHead(status: number, headers: Record<string, string>): unknown;
  end(body: string): unknown;
  writeContinue(): unknown;
}

/** The part of Node's `IncomingMessage` the edges read. */
export interface EdgeIncoming extends EdgeRequest {
  readonly url?: string | undefined;
  on(event: 'newListener', listener: (event: string | symbol) => void): unknown;
  off(event: 'newListener', listener: (event: string | symbol) => void): unknown;
}

/** The part of a socket a `CONNECT` hands over. */
export interface EdgeSocket {
  end(data: string): unknown;
  destroy(): unknown;
}

/** The part of Node's `http.Server` {@link answerHttpEdges} listens on. */
export interface EdgeServer<Incoming extends EdgeIncoming, Response extends EdgeResponse> {
  on(
    event: 'checkContinue' | 'checkExpectation',
    listener: (request: Incoming, response: Response) => void,
  ): unknown;
  on(event: 'connect', listener: (request: Incoming, socket: EdgeSocket) => void): unknown;
  emit(event: 'request', request: Incoming, response: Response): boolean;
}

/** Options of {@link answerHttpEdges} and {@link answerProblem}. */
export interface EdgeOptions {
  /** Header that carries the request id. @defaultValue `'Request-Id'` */
  readonly requestIdHeader?: string;
  /** Request id generator. @defaultValue `newRequestId` of this package */
  readonly generateRequestId?: () => string;
  /** The service's base of problem `type` URIs. @defaultValue relative `/problems/` */
  readonly typeBase?: string | undefined;
}

const encoder = new TextEncoder();

/** The path of an origin-form target, for `instance`; nothing for other forms or long ones. */
function pathOf(target: string | undefined): string | undefined {
  if (!target?.startsWith('/') || target.length > 2048) return undefined;
  return target.split(/[?#]/, 1)[0];
}

/**
 * Answers `problem` on `response` as problem+json with a fresh request id, `instance` set to the
 * request path, and `Connection: close` (nothing of the request's body has been read).
 */
export function answerProblem(
  request: { readonly url?: string | undefined },
  response: Pick<EdgeResponse, 'writeHead' | 'end'>,
  problem: ProblemError,
  options: EdgeOptions = {},
): void {
  const { requestIdHeader = 'Request-Id', generateRequestId = newRequestId, typeBase } = options;
  const requestId = generateRequestId();
  const instance = pathOf(request.url);
  const body = JSON.stringify(
    problem.toJSON({
      ...(instance === undefined ? {} : { instance }),
      requestId,
      ...(typeBase === undefined ? {} : { typeBase }),
    }),
  );
  const headers: Record<string, string> = {};
  for (const [name, value] of problem.responseHeaders()) headers[name] = value;
  headers[requestIdHeader] = requestId;
  headers['X-Content-Type-Options'] = 'nosniff';
  headers.Connection = 'close';
  headers['Content-Length'] = String(encoder.encode(body).length);
  response.writeHead(problem.status, headers);
  response.end(body);
}

/**
 * Answers what Node's HTTP server would otherwise answer bare, or not at all, before any route:
 *
 * - `Expect` other than `100-continue`: 417 `expectation_failed` problem+json (Node's own 417
 *   has no body and no request id; RFC 9110 section 10.1.1);
 * - `CONNECT`: 501 `not_implemented` problem+json (Node closes the socket without a word): an
 *   origin server that is not a proxy implements it for no resource (RFC 9110 section 9.3.6);
 * - `Expect: 100-continue`: `100 Continue` is sent only when the application starts reading
 *   the body, so it never goes out before authentication and other checks that answer without
 *   reading it (401, 403, 415, ...); Node would send it before the application ran. The request
 *   then reaches the server's `request` listeners as any other does. Node closes the connection
 *   after a final answer sent without `100 Continue`, so the unsent body is never misread as a
 *   next request.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * const server = createServer(handler);
 * answerHttpEdges(server);
 * ```
 */
export function answerHttpEdges<Incoming extends EdgeIncoming, Response extends EdgeResponse>(
  server: EdgeServer<Incoming, Response>,
  options: EdgeOptions = {},
): void {
  const { requestIdHeader = 'Request-Id', generateRequestId = newRequestId } = options;
  server.on('checkExpectation', (request, response) => {
    const problem = httpFramingProblems.create('expectation_failed', {
      detail: 'The only expectation this server meets is Expect: 100-continue.',
    });
    answerProblem(request, response, problem, options);
  });
  server.on('connect', (_request, socket) => {
    const problem = httpFramingProblems.create('not_implemented', {
      detail: 'CONNECT is not implemented: this server is not a proxy.',
    });
    socket.end(
      rawProblemResponse(problem, {
        header: requestIdHeader,
        requestId: generateRequestId(),
        typeBase: options.typeBase,
      }),
    );
    socket.destroy();
  });
  server.on('checkContinue', (request, response) => {
    // Any way of reading the body (a 'data' or 'readable' listener: pipe(), async iteration,
    // Readable.toWeb()) adds one of these listeners first.
    const onListener = (event: string | symbol) => {
      if (event !== 'data' && event !== 'readable') return;
      request.off('newListener', onListener);
      if (!response.headersSent) response.writeContinue();
    };
    request.on('newListener', onListener);
    server.emit('request', request, response);
  });
}
