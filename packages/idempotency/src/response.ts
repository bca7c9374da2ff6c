import { PROBLEM_MEDIA_TYPE } from '@holdfast/problem-details';
import type { StoredResponse } from './store';

/**
 * What a handler answers: a web `Response`, or a status with optional headers and a JSON body
 * (serialized as `application/json`; no body when `body` is `undefined`).
 */
export type HandlerResult =
  | Response
  | {
      readonly status: number;
      readonly headers?: ConstructorParameters<typeof Headers>[0];
      readonly body?: unknown;
    };

const encoder = new TextEncoder();
// The bytes of each response `toResponse` built from a value: `storeResponse` stores them as
// they are, instead of cloning the response (a stream tee) and reading the copy back.
const bodies = new WeakMap<Response, Uint8Array>();

/**
 * The `Response` for a handler's result.
 *
 * @example
 * ```ts
 * const response = toResponse({ status: 201, headers: { Location: '/v1/orders/ord_1' }, body: order });
 * ```
 */
export function toResponse(result: HandlerResult): Response {
  if (result instanceof Response) return result;
  if (!Number.isInteger(result.status) || result.status < 200 || result.status > 599) {
    throw new RangeError('status must be an integer from 200 to 599');
  }
  const headers = new Headers(result.headers);
  if (result.body === undefined) return new Response(null, { status: result.status, headers });
  if (!headers.has('content-type')) headers.set('Content-Type', 'application/json');
  const bytes = encoder.encode(JSON.stringify(result.body));
  const response = new Response(bytes, { status: result.status, headers });
  bodies.set(response, bytes);
  return response;
}

function isProblemJson(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]?.trim().toLowerCase() === PROBLEM_MEDIA_TYPE;
}

/**
 * The stored copy of a response: status, the allowlisted headers, the body bytes. A problem
 * body loses its `requestId`, which belongs to the first request only; the replay gets its own.
 *
 * @example
 * ```ts
 * const stored = await storeResponse(response, new Set(['location', 'content-type']));
 * ```
 */
export async function storeResponse(
  response: Response,
  allowlist: ReadonlySet<string>,
): Promise<StoredResponse> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    const lower = name.toLowerCase();
    if (allowlist.has(lower)) headers[lower] = value;
  });
  let body: Uint8Array | null =
    bodies.get(response) ??
    (response.body === null ? null : new Uint8Array(await response.clone().arrayBuffer()));
  if (body !== null && isProblemJson(headers['content-type'])) {
    body = withRequestId(body, undefined);
  }
  return { status: response.status, headers, body };
}

function withRequestId(body: Uint8Array, requestId: string | undefined): Uint8Array {
  let document: unknown;
  try {
    document = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return body;
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return body;
  const rest = Object.fromEntries(Object.entries(document).filter(([name]) => name !== 'requestId'));
  return new TextEncoder().encode(JSON.stringify(requestId === undefined ? rest : { ...rest, requestId }));
}

/**
 * The replay of a stored response: same status, stored headers and body, plus
 * `Idempotent-Replayed: true`. A stored problem body gets this request's `requestId`.
 *
 * @example
 * ```ts
 * return replayResponse(stored, c.get('requestId'));
 * ```
 */
export function replayResponse(stored: StoredResponse, requestId?: string): Response {
  const headers = new Headers(stored.headers);
  headers.set('Idempotent-Replayed', 'true');
  let body = stored.body;
  if (body !== null && requestId !== undefined && isProblemJson(stored.headers['content-type'])) {
    body = withRequestId(body, requestId);
  }
  const bytes = body === null ? null : new Uint8Array(body);
  return new Response(
    stored.status === 204 || stored.status === 205 || stored.status === 304 ? null : bytes,
    {
      status: stored.status,
      headers,
    },
  );
}
