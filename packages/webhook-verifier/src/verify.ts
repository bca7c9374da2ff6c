import { decodeBase64Into, decodedLength } from './base64';
import { decodeSecret } from './secret';

/**
 * An HMAC-SHA256 implementation: given a key, a function of the signed prefix
 * (`id.timestamp.`) and the raw body bytes. Two exist: `@noble/hashes` (portable) and
 * `node:crypto` (Node), picked by the package's export conditions.
 */
export type HmacSha256 = (key: Uint8Array) => (prefix: string, body: Uint8Array) => Uint8Array;

/** Request headers as the Fetch API or Node's `IncomingMessage#headers` hold them. */
export type HeadersInput = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifierOptions {
  /** One secret, or several during a rotation: any one of them verifying is enough. */
  secrets: string | readonly string[];
  /** Allowed clock difference in seconds, either way (SPEC section 6, step 2). Default 300. */
  toleranceSeconds?: number;
  /** Current time in milliseconds. Default `Date.now`. */
  now?: () => number;
}

/** The codes a failed verification carries (CONTRACT section 2). */
export type VerifyErrorCode = 'webhook_timestamp_out_of_window' | 'webhook_signature_invalid';

/** Why verification failed, as a result: `status` is the HTTP status to answer with. */
export interface VerifyFailure {
  ok: false;
  code: VerifyErrorCode;
  status: 400 | 401;
  /** Says which rule failed; never echoes the body and never the expected signature. */
  detail: string;
}

/** The body of a verified webhook as JSON, or why it is not JSON. */
export type JsonResult<T> =
  | { ok: true; value: T }
  | { ok: false; code: 'invalid_json'; status: 400; detail: string };

/** A webhook whose signature verified: only now may its body be read. */
export interface VerifiedWebhook {
  ok: true;
  /** `webhook-id`: the deduplication key. */
  id: string;
  /** `webhook-timestamp`, Unix seconds. */
  timestamp: number;
  /** The exact bytes that were signed. */
  body: Uint8Array;
  /**
   * The body parsed as UTF-8 JSON. `T` is not checked: validate the value (zod or the like)
   * before trusting its shape. Invalid UTF-8 or JSON gives `{ ok: false, code: 'invalid_json' }`.
   */
  json<T = unknown>(): JsonResult<T>;
}

export type VerifyResult = VerifiedWebhook | VerifyFailure;

/** A verifier bound to its secrets. */
export interface Verifier {
  /** Verifies a delivery; expected failures are results, never throws. */
  verify(headers: HeadersInput, body: string | Uint8Array): VerifyResult;
  /** Like `verify`, but throws {@link WebhookVerificationError} on failure. */
  verifyOrThrow(headers: HeadersInput, body: string | Uint8Array): VerifiedWebhook;
}

/**
 * Thrown by `verifyOrThrow`: carries the stable `code`, the HTTP `status` and the `detail`.
 *
 * @example
 * ```ts
 * try {
 *   verifier.verifyOrThrow(req.headers, body);
 * } catch (error) {
 *   if (error instanceof WebhookVerificationError) return new Response(null, { status: error.status });
 *   throw error;
 * }
 * ```
 */
export class WebhookVerificationError extends Error {
  readonly code: VerifyErrorCode;
  readonly status: 400 | 401;
  readonly detail: string;
  constructor(failure: VerifyFailure) {
    super(failure.detail);
    this.name = 'WebhookVerificationError';
    this.code = failure.code;
    this.status = failure.status;
    this.detail = failure.detail;
  }
}

const encoder = new TextEncoder();
const SIGNATURE_BYTES = 32;
/** More entries than this is not a rotation but an attempt to make us hash in a loop. */
const MAX_ENTRIES = 16;

function isFetchHeaders(headers: HeadersInput): headers is Headers {
  // Duck-typed: Headers from another realm or a polyfill fail `instanceof`.
  return typeof headers.get === 'function';
}

function header(headers: HeadersInput, name: string): string | undefined | null {
  if (isFetchHeaders(headers)) return headers.get(name) ?? undefined;
  const record = headers;
  let value = record[name];
  if (value === undefined) {
    for (const key of Object.keys(record)) {
      if (key.toLowerCase() === name) {
        value = record[key];
        break;
      }
    }
  }
  if (value === undefined || typeof value === 'string') return value;
  // A repeated header: the signature's entries may be split over lines, not id or timestamp.
  return name.endsWith('signature') ? value.join(' ') : value.length === 1 ? value[0] : null;
}

/** Standard Webhooks names first, then Svix's, as Svix's own verifier accepts both. */
function webhookHeader(headers: HeadersInput, name: string, svixName: string): string | undefined | null {
  return header(headers, name) ?? header(headers, svixName);
}

function fail(code: VerifyErrorCode, detail: string): VerifyFailure {
  return { ok: false, code, status: code === 'webhook_signature_invalid' ? 401 : 400, detail };
}

/**
 * Lengths first (the caller decodes only 32-byte entries), then every byte of `given` at
 * `at` against `expected`, whatever the first difference (SPEC section 6 step 3).
 */
function constantTimeEqualAt(given: Uint8Array, at: number, expected: Uint8Array): boolean {
  if (expected.length !== SIGNATURE_BYTES) return false;
  let diff = 0;
  // Indexing views honours their byteOffset, unlike a DataView over `.buffer`.
  for (let i = 0; i < SIGNATURE_BYTES; i += 1) diff |= (given[at + i] ?? 0) ^ (expected[i] ?? 0);
  return diff === 0;
}

function parseJson<T>(body: Uint8Array): JsonResult<T> {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return { ok: false, code: 'invalid_json', status: 400, detail: 'The signed body is not UTF-8.' };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, code: 'invalid_json', status: 400, detail: 'The signed body is not JSON.' };
  }
}

// A class, not an object literal with a closure: `json` lives once on the prototype.
class Verified implements VerifiedWebhook {
  readonly ok = true as const;
  constructor(
    readonly id: string,
    readonly timestamp: number,
    readonly body: Uint8Array,
  ) {}
  json<T = unknown>(): JsonResult<T> {
    return parseJson<T>(this.body);
  }
}

/**
 * Binds {@link createVerifier} to an HMAC implementation. Internal: the package entry points
 * export it applied to `@noble/hashes` (portable) or `node:crypto` (Node).
 */
export function verifierFactory(hmacSha256: HmacSha256): (options: VerifierOptions) => Verifier {
  return (options) => {
    const list = typeof options.secrets === 'string' ? [options.secrets] : [...options.secrets];
    if (list.length === 0) throw new RangeError('secrets must hold at least one secret');
    const macs = list.map((secret, i) =>
      hmacSha256(decodeSecret(secret, typeof options.secrets === 'string' ? 'secrets' : `secrets[${i}]`)),
    );
    const tolerance = options.toleranceSeconds ?? 300;
    if (!Number.isSafeInteger(tolerance) || tolerance < 0) {
      throw new RangeError('toleranceSeconds must be a non-negative integer');
    }
    const now = options.now ?? Date.now;
    // Decoded v1 entries, reused across calls: verify is synchronous, so never shared mid-call.
    const given = new Uint8Array(SIGNATURE_BYTES * MAX_ENTRIES);

    const verify = (headers: HeadersInput, rawBody: string | Uint8Array): VerifyResult => {
      // Step 1: the raw bytes, before anything else looks at them.
      const body = typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody;
      if (!(body instanceof Uint8Array)) {
        throw new TypeError('body must be the raw request body: a string or a Uint8Array');
      }
      // Step 2: an all-digit timestamp within the window; "1700000000xyz" is not parsed by prefix.
      const timestamp = webhookHeader(headers, 'webhook-timestamp', 'svix-timestamp');
      if (typeof timestamp !== 'string' || !/^[0-9]{1,15}$/.test(timestamp)) {
        return fail(
          'webhook_timestamp_out_of_window',
          timestamp == null || timestamp === ''
            ? 'The webhook-timestamp header is missing.'
            : 'The webhook-timestamp header must be whole Unix seconds, digits only.',
        );
      }
      const seconds = Number(timestamp);
      const skew = Math.floor(now() / 1000) - seconds;
      if (skew > tolerance || skew < -tolerance) {
        return fail(
          'webhook_timestamp_out_of_window',
          `The webhook-timestamp is ${Math.abs(skew)} s ${skew > 0 ? 'old' : 'in the future'}; at most ${tolerance} s is accepted.`,
        );
      }
      const id = webhookHeader(headers, 'webhook-id', 'svix-id');
      if (typeof id !== 'string' || id === '') {
        return fail('webhook_signature_invalid', 'The webhook-id header is missing.');
      }
      const signature = webhookHeader(headers, 'webhook-signature', 'svix-signature');
      if (typeof signature !== 'string' || signature === '') {
        return fail('webhook_signature_invalid', 'The webhook-signature header is missing.');
      }
      // Step 3: entries of other schemes (v1a, ...) are ignored, not fatal.
      let count = 0;
      // Entries are separated by spaces; scanned in place rather than split into new strings.
      for (let start = 0; start < signature.length; ) {
        let end = signature.indexOf(' ', start);
        if (end === -1) end = signature.length;
        if (signature.startsWith('v1,', start)) {
          if (count === MAX_ENTRIES) {
            return fail('webhook_signature_invalid', `More than ${MAX_ENTRIES} v1 signatures.`);
          }
          // The decoded length is known from the entry's length, before any decoding.
          // Fetch joins a repeated header with ", ": that comma is not part of the entry.
          const stop = signature.charCodeAt(end - 1) === 44 ? end - 1 : end;
          const entry = stop === signature.length && start === 0 ? signature : signature.slice(start, stop);
          if (
            decodedLength(entry, 3) === SIGNATURE_BYTES &&
            decodeBase64Into(entry, 3, given, count * SIGNATURE_BYTES)
          ) {
            count += 1;
          }
        }
        start = end + 1;
      }
      if (count === 0) {
        return fail('webhook_signature_invalid', 'The webhook-signature header has no v1 signature.');
      }
      const prefix = `${id}.${timestamp}.`;
      for (const mac of macs) {
        const expected = mac(prefix, body);
        for (let k = 0; k < count; k += 1) {
          if (constantTimeEqualAt(given, k * SIGNATURE_BYTES, expected))
            return new Verified(id, seconds, body);
        }
      }
      return fail('webhook_signature_invalid', 'No signature matches a configured secret.');
    };

    return {
      verify,
      verifyOrThrow(headers, body) {
        const result = verify(headers, body);
        if (!result.ok) throw new WebhookVerificationError(result);
        return result;
      },
    };
  };
}
