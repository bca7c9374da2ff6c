import { decodeBase64Into, decodedLength, decodeSecret, signedContent } from '@holdfast/webhook-keys';

// The verifier without any ed25519 code: the `/v1` entry uses it as it is (v1, HMAC-SHA256,
// only), the main entry (verify.ts) gives it ed25519 for v1a. Nothing here may import a curve.

/**
 * An HMAC-SHA256 implementation: given a key, a function of the signed prefix
 * (`id.timestamp.`) and the raw body (a string is its UTF-8 bytes). Two exist: a compact
 * synchronous one in JavaScript (portable) and `node:crypto` (Node), picked by the package's
 * export conditions.
 */
export type HmacSha256 = (key: Uint8Array) => (prefix: string, body: string | Uint8Array) => Uint8Array;

/**
 * An ed25519 public key (RFC 8032), prepared: whether a 64-byte signature is valid for the
 * whole message. `verifySync` exists where the platform verifies synchronously (`node:crypto`);
 * WebCrypto's verify is asynchronous only.
 */
export interface Ed25519Key {
  verify(message: Uint8Array, signature: Uint8Array): Promise<boolean>;
  verifySync?: (message: Uint8Array, signature: Uint8Array) => boolean;
}

/** Prepares a 32-byte ed25519 public key. Two exist: WebCrypto (portable) and `node:crypto` (Node). */
export type Ed25519Verify = (publicKey: Uint8Array) => Ed25519Key;

/** How the main entry reads a `whpk_` key (`parameter` names it in errors) into a prepared key. */
export type PublicKeyReader = (key: string, parameter: string) => Ed25519Key;

/** Request headers as the Fetch API or Node's `IncomingMessage#headers` hold them. */
export type HeadersInput = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifierOptions {
  /**
   * One key, or several during a rotation: any one of them verifying one entry is enough.
   * `whsec_` secrets verify `v1,` (HMAC-SHA256) entries, `whpk_` public keys verify `v1a,`
   * (ed25519) entries; entries of a scheme without a key here are ignored.
   */
  secrets: string | readonly string[];
  /** Allowed clock difference in seconds, either way (Standard Webhooks: reject stale timestamps). Default 300. */
  toleranceSeconds?: number;
  /** Current time in milliseconds. Default `Date.now`. */
  now?: () => number;
}

/** The codes a failed verification carries. */
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
  /**
   * Verifies a delivery, synchronously; expected failures are results, never throws. Verifies
   * `v1` on every runtime, and `v1a` where ed25519 is synchronous: `node:crypto` (Node, Deno and
   * Bun through the `node` export condition). Elsewhere (Workers, browsers: WebCrypto's ed25519
   * is asynchronous) a verifier holding a `whpk_` key throws a `TypeError` here: use
   * {@link Verifier.verifyAsync}.
   */
  verify(headers: HeadersInput, body: string | Uint8Array): VerifyResult;
  /** Like `verify`, but throws {@link WebhookVerificationError} on failure. */
  verifyOrThrow(headers: HeadersInput, body: string | Uint8Array): VerifiedWebhook;
  /**
   * Verifies a delivery, `v1` and `v1a`, on every runtime: ed25519 through `node:crypto` on
   * Node, Deno and Bun, WebCrypto elsewhere (and `@noble/curves`, loaded on first use, where WebCrypto
   * has no Ed25519). Expected failures are results; it rejects only where `verify` throws.
   */
  verifyAsync(headers: HeadersInput, body: string | Uint8Array): Promise<VerifyResult>;
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
/** HMAC-SHA256 is 32 bytes; ed25519 signatures are 64 (RFC 8032 section 5.1.6). */
const V1_BYTES = 32;
const V1A_BYTES = 64;
/** More entries than this is not a rotation but an attempt to make us hash in a loop. */
const MAX_V1_ENTRIES = 16;
/** An ed25519 check costs far more than an HMAC compare: a rotation sends two entries at most. */
const MAX_V1A_ENTRIES = 4;

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
 * 1 when equal, else 0. Lengths first (the caller decodes only 32-byte entries), then every
 * byte of `given` at `at` against `expected`, whatever the first difference, so the time taken
 * says nothing about how much of a guess was right.
 */
function constantTimeEqualAt(given: Uint8Array, at: number, expected: Uint8Array): number {
  if (expected.length !== V1_BYTES) return 0;
  let diff = 0;
  // Indexing views honours their byteOffset, unlike a DataView over `.buffer`.
  for (let i = 0; i < V1_BYTES; i += 1) diff |= (given[at + i] ?? 0) ^ (expected[i] ?? 0);
  return diff === 0 ? 1 : 0;
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

// A class, not an object literal with a closure: `json` lives once on the prototype. A string
// body becomes bytes only when asked for: verifying it on node:crypto never copied it.
class Verified implements VerifiedWebhook {
  readonly ok = true as const;
  #body: string | Uint8Array;
  constructor(
    readonly id: string,
    readonly timestamp: number,
    body: string | Uint8Array,
  ) {
    this.#body = body;
  }
  get body(): Uint8Array {
    if (typeof this.#body === 'string') this.#body = encoder.encode(this.#body);
    return this.#body;
  }
  json<T = unknown>(): JsonResult<T> {
    return parseJson<T>(this.body);
  }
}

/** A delivery whose `v1a` entries are still to be checked: every key against every entry. */
class Pending {
  constructor(
    readonly matched: boolean,
    readonly id: string,
    readonly seconds: number,
    readonly body: string | Uint8Array,
    readonly message: Uint8Array,
    readonly signatures: readonly Uint8Array[],
  ) {}
}

/**
 * Binds `createVerifier` to its crypto. Internal: the `/v1` entry gives it an HMAC alone
 * (`whpk_` keys then throw), the main entry also a reader of `whpk_` keys (verify.ts).
 */
export function verifierFactory(
  hmacSha256: HmacSha256,
  publicKeyOf?: PublicKeyReader,
): (options: VerifierOptions) => Verifier {
  return (options) => {
    const list = typeof options.secrets === 'string' ? [options.secrets] : [...options.secrets];
    if (list.length === 0) throw new RangeError('secrets must hold at least one secret');
    const macs: ReturnType<HmacSha256>[] = [];
    const publicKeys: Ed25519Key[] = [];
    list.forEach((secret, i) => {
      const parameter = typeof options.secrets === 'string' ? 'secrets' : `secrets[${i}]`;
      const prefix = typeof secret === 'string' ? secret.slice(0, 5) : '';
      if (prefix === 'whsk_') {
        throw new TypeError(
          `${parameter} is a "whsk_" signing key: give the verifier its "whpk_" public key`,
        );
      }
      if (prefix !== 'whpk_') macs.push(hmacSha256(decodeSecret(secret, parameter)));
      else if (publicKeyOf) publicKeys.push(publicKeyOf(secret, parameter));
      else {
        throw new TypeError(
          `${parameter} is a "whpk_" public key (v1a): @holdfast/webhook-verifier/v1 verifies v1 only, import createVerifier from @holdfast/webhook-verifier`,
        );
      }
    });
    // Only the schemes a key was given for are read from the header; the others are ignored.
    const schemes = [macs.length > 0 ? 'v1' : '', publicKeys.length > 0 ? 'v1a' : '']
      .filter(Boolean)
      .join(' or ');
    const tolerance = options.toleranceSeconds ?? 300;
    if (!Number.isSafeInteger(tolerance) || tolerance < 0) {
      throw new RangeError('toleranceSeconds must be a non-negative integer');
    }
    const now = options.now ?? Date.now;
    const mismatch = `No signature matches a configured ${publicKeys.length > 0 ? 'key' : 'secret'}.`;
    // Decoded entries, reused across calls: they are read before `check` returns, never after.
    const given = new Uint8Array(V1_BYTES * MAX_V1_ENTRIES);
    const givenA = new Uint8Array(V1A_BYTES * MAX_V1A_ENTRIES);
    const sync = publicKeys.every((key) => key.verifySync);

    // Everything but the ed25519 checks, which `verify` runs synchronously and `verifyAsync` not.
    const check = (headers: HeadersInput, body: string | Uint8Array): VerifyResult | Pending => {
      // Step 1: the raw body, never a re-serialised object. A string is hashed as its UTF-8
      // bytes; node:crypto hashes it as it is, without a copy.
      if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
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
      // Step 3: entries of schemes without a key here (v1a for a secret-only verifier, v1 for
      // a public-key-only one, v2, ...) are ignored, not fatal.
      let count = 0;
      let countA = 0;
      // Entries are separated by spaces; scanned in place rather than split into new strings.
      for (let start = 0; start < signature.length; ) {
        let end = signature.indexOf(' ', start);
        if (end === -1) end = signature.length;
        const v1 = macs.length > 0 && signature.startsWith('v1,', start);
        const v1a = !v1 && publicKeys.length > 0 && signature.startsWith('v1a,', start);
        if (v1 || v1a) {
          if (v1 ? count === MAX_V1_ENTRIES : countA === MAX_V1A_ENTRIES) {
            const max = v1 ? MAX_V1_ENTRIES : MAX_V1A_ENTRIES;
            return fail('webhook_signature_invalid', `More than ${max} ${v1 ? 'v1' : 'v1a'} signatures.`);
          }
          // The decoded length is known from the entry's length, before any decoding.
          // Fetch joins a repeated header with ", ": that comma is not part of the entry.
          const stop = signature.charCodeAt(end - 1) === 44 ? end - 1 : end;
          const entry = stop === signature.length && start === 0 ? signature : signature.slice(start, stop);
          const skip = v1 ? 3 : 4;
          if (v1) {
            if (
              decodedLength(entry, skip) === V1_BYTES &&
              decodeBase64Into(entry, skip, given, count * V1_BYTES)
            ) {
              count += 1;
            }
          } else if (
            decodedLength(entry, skip) === V1A_BYTES &&
            decodeBase64Into(entry, skip, givenA, countA * V1A_BYTES)
          ) {
            countA += 1;
          }
        }
        start = end + 1;
      }
      if (count + countA === 0) {
        return fail('webhook_signature_invalid', `The webhook-signature header has no ${schemes} signature.`);
      }
      const prefix = `${id}.${timestamp}.`;
      // Every key against every entry, with no early exit: how long this takes says nothing
      // about which key or entry matched.
      let matched = 0;
      if (count > 0) {
        for (const mac of macs) {
          const expected = mac(prefix, body);
          for (let k = 0; k < count; k += 1) matched |= constantTimeEqualAt(given, k * V1_BYTES, expected);
        }
      }
      if (countA > 0) {
        // ed25519 is not streamed: the whole message, built once for every key and entry. The
        // entries are copied out of the shared buffer: an asynchronous check outlives this call.
        const signatures: Uint8Array[] = [];
        for (let k = 0; k < countA; k += 1) signatures.push(givenA.slice(k * V1A_BYTES, (k + 1) * V1A_BYTES));
        return new Pending(matched === 1, id, seconds, body, signedContent(prefix, body), signatures);
      }
      return matched === 1 ? new Verified(id, seconds, body) : fail('webhook_signature_invalid', mismatch);
    };

    const settle = (pending: Pending, results: readonly boolean[]): VerifyResult =>
      pending.matched || results.includes(true)
        ? new Verified(pending.id, pending.seconds, pending.body)
        : fail('webhook_signature_invalid', mismatch);

    const verify = (headers: HeadersInput, body: string | Uint8Array): VerifyResult => {
      // Decided by the keys, not by the delivery: the same verifier throws on every call or none.
      if (!sync) {
        throw new TypeError(
          'v1a verification is asynchronous on this runtime (WebCrypto Ed25519): call verifyAsync',
        );
      }
      const result = check(headers, body);
      if (!(result instanceof Pending)) return result;
      const results: boolean[] = [];
      for (const key of publicKeys) {
        for (const signature of result.signatures)
          results.push(key.verifySync?.(result.message, signature) ?? false);
      }
      return settle(result, results);
    };

    return {
      verify,
      verifyOrThrow(headers, body) {
        const result = verify(headers, body);
        if (!result.ok) throw new WebhookVerificationError(result);
        return result;
      },
      async verifyAsync(headers, body) {
        const result = check(headers, body);
        if (!(result instanceof Pending)) return result;
        const checks: Promise<boolean>[] = [];
        for (const key of publicKeys) {
          for (const signature of result.signatures) checks.push(key.verify(result.message, signature));
        }
        return settle(result, await Promise.all(checks));
      },
    };
  };
}
