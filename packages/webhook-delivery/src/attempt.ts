import type { createSigner } from '@holdfast/webhook-signer';
import { type Dispatcher, request } from 'undici';
import { parseRetryAfter } from './classify';
import type { DeliveryDispatchers } from './egress';
import { checkDestination, type DestinationOptions } from './ssrf';

const BODY_PREFIX_BYTES = 1024;

/** What one HTTP attempt came to. */
export interface AttemptReply {
  /** HTTP status, or undefined for a timeout, a connection error or a forbidden destination. */
  status: number | undefined;
  error: string | null;
  /** The first 1 KiB of the answer, as UTF-8 text without NUL. */
  prefix: string | null;
  retryAfterMs: number | undefined;
  /** The destination failed the SSRF check: no request was made. */
  forbidden: boolean;
}

export interface AttemptInput {
  url: string;
  payload: string;
  eventId: string;
  /** Picks the egress route (the same bound address for an endpoint); the URL's origin without it. */
  endpointId?: string;
  signer: ReturnType<typeof createSigner>;
  /** The attempt's start, ms: the signature's timestamp. */
  started: number;
  now: () => number;
  /** Aborts the request (its endpoint was deleted or disabled meanwhile). */
  signal?: AbortSignal;
}

export interface AttemptContext {
  destination: DestinationOptions;
  /** Undici dispatchers whose connections go only to checked addresses, by endpoint (`deliveryDispatchers`). */
  dispatchers: DeliveryDispatchers;
  timeoutMs: number;
}

/**
 * One delivery attempt: the SSRF check again, signed afresh over
 * the event's exact bytes with this attempt's timestamp (Standard Webhooks,
 * https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md),
 * POSTed through the pinned dispatcher (bound to the endpoint's egress address or through the
 * egress proxy when one is set), redirects never followed (undici's `request` follows none),
 * bounded by the timeout, and the first 1 KiB of the answer kept.
 */
export async function sendAttempt(input: AttemptInput, context: AttemptContext): Promise<AttemptReply> {
  const { timeoutMs } = context;
  const check = await checkDestination(input.url, context.destination);
  if (!check.ok) {
    return {
      status: undefined,
      error: `destination forbidden: ${check.reason}`,
      prefix: null,
      retryAfterMs: undefined,
      forbidden: true,
    };
  }
  const headers = input.signer.headers({
    id: input.eventId,
    timestamp: Math.floor(input.started / 1000),
    body: input.payload,
  });
  try {
    const response = await request(check.url, {
      method: 'POST',
      dispatcher: context.dispatchers.for(input.endpointId ?? check.url.origin),
      headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'Holdfast-Webhooks/1.0' },
      body: input.payload,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: input.signal
        ? AbortSignal.any([AbortSignal.timeout(timeoutMs), input.signal])
        : AbortSignal.timeout(timeoutMs),
    });
    const retryAfter = response.headers['retry-after'];
    const retryAfterMs = parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, input.now());
    return {
      status: response.statusCode,
      error: null,
      prefix: await bodyPrefix(response.body),
      retryAfterMs,
      forbidden: false,
    };
  } catch (cause) {
    return {
      status: undefined,
      error: describeError(cause, timeoutMs),
      prefix: null,
      retryAfterMs: undefined,
      forbidden: false,
    };
  }
}

/** The first 1 KiB of a body; the rest is never read (the connection is closed instead). */
async function bodyPrefix(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= BODY_PREFIX_BYTES) break;
    }
  } finally {
    body.destroy();
  }
  if (size === 0) return '';
  const bytes = new Uint8Array(Math.min(size, BODY_PREFIX_BYTES));
  let offset = 0;
  for (const chunk of chunks) {
    if (offset >= bytes.length) break;
    bytes.set(chunk.subarray(0, bytes.length - offset), offset);
    offset += chunk.length;
  }
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes).replaceAll('\u0000', '');
}

function describeError(cause: unknown, timeoutMs: number): string {
  const name = cause instanceof Error ? cause.name : '';
  if (
    name === 'TimeoutError' ||
    name === 'HeadersTimeoutError' ||
    name === 'BodyTimeoutError' ||
    name === 'AbortError'
  ) {
    return `timeout after ${timeoutMs} ms`;
  }
  if (cause instanceof Error) {
    const code = 'code' in cause && typeof cause.code === 'string' ? `${cause.code}: ` : '';
    return `${code}${cause.message}`.slice(0, 500);
  }
  return 'connection failed';
}
