import type { ProblemError } from '@holdfast/problem-details';

const encoder = new TextEncoder();

const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Content Too Large',
  417: 'Expectation Failed',
  431: 'Request Header Fields Too Large',
  501: 'Not Implemented',
  503: 'Service Unavailable',
};

/** Where a raw answer names its request id and path. */
export interface RawContext {
  /** Header carrying the request id. */
  readonly header: string;
  readonly requestId: string;
  /** The request path, for `instance`, when known. */
  readonly instance?: string | undefined;
  /** The service's base of problem `type` URIs. @defaultValue relative `/problems/` */
  readonly typeBase?: string | undefined;
}

/**
 * A whole HTTP/1.1 response carrying `problem` as problem+json, with its own headers
 * (`Retry-After`, `Allow`, ...) and `Connection: close`: for sockets no `ServerResponse` owns
 * (what the parser refused, a `CONNECT`, a connection over its address's cap).
 */
export function rawProblemResponse(problem: ProblemError, context: RawContext): string {
  const { header, requestId, instance, typeBase } = context;
  const body = JSON.stringify(
    problem.toJSON({
      ...(instance === undefined ? {} : { instance }),
      requestId,
      ...(typeBase === undefined ? {} : { typeBase }),
    }),
  );
  const lines = [`HTTP/1.1 ${problem.status} ${REASONS[problem.status] ?? 'Error'}`];
  for (const [name, value] of problem.responseHeaders()) {
    if (name !== 'request-id') lines.push(`${name}: ${value}`);
  }
  lines.push(
    `Content-Length: ${encoder.encode(body).length}`,
    `${header}: ${requestId}`,
    'X-Content-Type-Options: nosniff',
    'Connection: close',
  );
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}
