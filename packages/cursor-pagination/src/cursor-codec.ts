import type { ProblemError } from '@holdfast/problem-details';
import { sha256 } from '@noble/hashes/sha2';
import { decodeBase64url, encodeBase64url } from './base64url';
import { type Keyring, macFor } from './keyring';
import { cursorProblems } from './problems';

/** The position a cursor carries: one text value (or null) per ORDER BY term, the id last. */
export interface CursorPayload {
  /** `cursorBinding(...)` of the sort, filter and account the cursor was issued for. */
  readonly binding: string;
  /** The sort-key values exactly as compared (lossless text), then the id. */
  readonly values: readonly (string | null)[];
}

/** What a cursor must match to be accepted. */
export interface CursorExpectation {
  readonly binding: string;
  /** The number of ORDER BY terms of the current sort, id included. */
  readonly size: number;
}

/** The result of `decodeCursor`. */
export type CursorResult =
  | { readonly ok: true; readonly value: CursorPayload }
  | { readonly ok: false; readonly error: ProblemError<'invalid_cursor'> };

/** Values a cursor binding covers besides the sort: equality filters. */
export type FilterValue = string | number | boolean | null;

/** What a cursor is bound to. */
export interface CursorBindingInput {
  /** The canonical sort (`Sort.canonical`). */
  readonly sort: string;
  /** The equality filters in force; `undefined` entries count as absent. */
  readonly filter?: Readonly<Record<string, FilterValue | undefined>>;
  /** The tenant and anything else that scopes the list: `{ account, resource }`. */
  readonly scope: Readonly<Record<string, string>>;
}

const VERSION = 1;
/** The longest sort value a cursor carries, in UTF-16 code units; bound text sort fields to it. */
export const MAX_CURSOR_VALUE_LENGTH = 512;
// Three sort keys and the id.
const MAX_VALUES = 4;
/**
 * Cursors are small; anything longer is refused before any decoding work. Large enough for four
 * values of `MAX_CURSOR_VALUE_LENGTH` characters of 3-byte UTF-8 each, base64url-encoded.
 */
export const MAX_CURSOR_LENGTH = 12_288;

const encoder = new TextEncoder();
// Recent bindings by canonical input: a list is paged with the same sort, filter and account
// over and over, and the digest of one canonical string never changes.
const BINDING_CACHE_SIZE = 1024;
const bindings = new Map<string, string>();
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function canonicalEntries(record: Readonly<Record<string, unknown>> | undefined): [string, unknown][] {
  return Object.entries(record ?? {})
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The binding of a cursor: a SHA-256 digest (base64url, 128 bits) of the canonical sort,
 * filters and scope. A cursor answers only where the binding is recomputed identically, so one
 * issued for another sort, filter or account is refused.
 *
 * @example
 * ```ts
 * const binding = await cursorBinding({ sort: '-createdAt', filter: { status: 'pending' }, scope: { account } });
 * ```
 */
export async function cursorBinding(input: CursorBindingInput): Promise<string> {
  const canonical = JSON.stringify([
    VERSION,
    input.sort,
    canonicalEntries(input.filter),
    canonicalEntries(input.scope),
  ]);
  let binding = bindings.get(canonical);
  if (binding === undefined) {
    // Synchronous SHA-256: WebCrypto's async digest costs a thread-pool round trip per page.
    binding = encodeBase64url(sha256(encoder.encode(canonical)).subarray(0, 16));
    if (bindings.size >= BINDING_CACHE_SIZE) bindings.clear();
    bindings.set(canonical, binding);
  }
  return binding;
}

function signedPart(
  kid: string,
  binding: string,
  values: readonly (string | null)[],
): Uint8Array<ArrayBuffer> {
  return encoder.encode(JSON.stringify([VERSION, kid, binding, values]));
}

function serialize(kid: string, payload: CursorPayload, signature: string): string {
  return JSON.stringify({ v: VERSION, kid, b: payload.binding, k: payload.values, s: signature });
}

/**
 * Signs a position as a cursor: base64url of a small JSON object carrying
 * the format version, the key id, the binding, the values and an HMAC-SHA256 over them with
 * the keyring's current key. Throws `RangeError` for values a cursor cannot carry (more than
 * four, a NULL id, or a value longer than `MAX_CURSOR_VALUE_LENGTH`).
 *
 * @example
 * ```ts
 * const cursor = await encodeCursor(keyring, { binding, values: ['2026-11-22 16:30:19.123+00', 'ord_x'] });
 * ```
 */
export async function encodeCursor(keyring: Keyring, payload: CursorPayload): Promise<string> {
  // Refuse to issue what decodeCursor would refuse: a client must never hold a dead cursor.
  if (!isValues(payload.values)) {
    throw new RangeError(
      `a cursor carries 1 to ${MAX_VALUES} values (the id last, not null) of at most ${MAX_CURSOR_VALUE_LENGTH} characters`,
    );
  }
  const kid = keyring.current;
  const sign = macFor(keyring, kid);
  if (!sign) throw new TypeError('keyring.current must name one of keyring.keys');
  const mac = sign(signedPart(kid, payload.binding, payload.values));
  return encodeBase64url(encoder.encode(serialize(kid, payload, encodeBase64url(mac))));
}

/** Compares two MACs of equal length without an early exit, so timing reveals nothing. */
function equalConstantTime(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i += 1) difference |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return difference === 0;
}

function invalid(detail: string): CursorResult {
  return {
    ok: false,
    error: cursorProblems.create('invalid_cursor', {
      detail,
      errors: [{ field: 'cursor', code: 'invalid_cursor', detail }],
    }),
  };
}

const MALFORMED = 'The cursor is malformed or has been altered; use pageInfo.nextCursor exactly as received.';
const MISMATCH =
  'The cursor was issued for another sort, filter or account; repeat the same sort and filters, or start again without a cursor.';

function isValues(value: unknown): value is (string | null)[] {
  return (
    Array.isArray(value) &&
    value.length >= 1 &&
    value.length <= MAX_VALUES &&
    value.every(
      (item) => item === null || (typeof item === 'string' && item.length <= MAX_CURSOR_VALUE_LENGTH),
    ) &&
    typeof value[value.length - 1] === 'string'
  );
}

/**
 * Verifies and decodes a cursor. Anything wrong (not base64url, not the exact JSON this
 * package writes, unknown key id, bad signature, issued for another binding or sort shape) is a
 * result holding 400 `invalid_cursor`, never a throw and never a 500.
 *
 * @example
 * ```ts
 * const result = await decodeCursor(keyring, c.req.query('cursor') ?? '', { binding, size: 2 });
 * if (!result.ok) throw result.error;
 * ```
 */
export async function decodeCursor(
  keyring: Keyring,
  raw: string,
  expected?: CursorExpectation,
): Promise<CursorResult> {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_CURSOR_LENGTH)
    return invalid(MALFORMED);
  const bytes = decodeBase64url(raw);
  if (!bytes) return invalid(MALFORMED);
  let text: string;
  let parsed: unknown;
  try {
    text = decoder.decode(bytes);
    parsed = JSON.parse(text);
  } catch {
    return invalid(MALFORMED);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return invalid(MALFORMED);
  const { v, kid, b, k, s } = parsed as Record<string, unknown>;
  if (
    v !== VERSION ||
    typeof kid !== 'string' ||
    typeof b !== 'string' ||
    typeof s !== 'string' ||
    !isValues(k)
  ) {
    return invalid(MALFORMED);
  }
  const payload: CursorPayload = { binding: b, values: k };
  // Only the exact bytes this package writes are accepted: a re-encoded or padded variant of a
  // valid cursor is an altered cursor too.
  if (serialize(kid, payload, s) !== text) return invalid(MALFORMED);
  const sign = macFor(keyring, kid);
  const mac = decodeBase64url(s);
  if (!sign || !mac || mac.length !== 32) return invalid(MALFORMED);
  if (!equalConstantTime(mac, sign(signedPart(kid, b, k)))) return invalid(MALFORMED);
  if (expected && (b !== expected.binding || k.length !== expected.size)) return invalid(MISMATCH);
  return { ok: true, value: payload };
}
