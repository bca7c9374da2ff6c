import { sha256 } from '@noble/hashes/sha2';

/**
 * The canonical JSON text of a value, so that whitespace and key order never make two equal
 * bodies differ: object members sorted by UTF-16 code units and numbers and strings written as
 * ECMAScript's `JSON.stringify` writes them, which is the JSON Canonicalization Scheme
 * (RFC 8785) for every value `JSON.parse` can produce. `undefined`, functions and symbols are
 * left out of objects and become `null` in arrays, as `JSON.stringify` does.
 *
 * @example
 * ```ts
 * canonicalJson({ b: 1, a: [true, { d: 'x', c: null }] }); // '{"a":[true,{"c":null,"d":"x"}],"b":1}'
 * ```
 */
export function canonicalJson(value: unknown): string {
  const text = write(value);
  if (text === undefined) throw new TypeError('canonicalJson: the value has no JSON form');
  return text;
}

function write(value: unknown): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('canonicalJson: numbers must be finite');
      return JSON.stringify(value);
    case 'string':
      return JSON.stringify(value);
    case 'bigint':
      throw new TypeError('canonicalJson: bigint has no JSON form');
    case 'object': {
      if ('toJSON' in value && typeof value.toJSON === 'function') return write(value.toJSON());
      if (Array.isArray(value)) return `[${value.map((item) => write(item) ?? 'null').join(',')}]`;
      const members: string[] = [];
      const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      for (const [name, item] of entries) {
        const member = write(item);
        if (member !== undefined) members.push(`${JSON.stringify(name)}:${member}`);
      }
      return `{${members.join(',')}}`;
    }
    default:
      return undefined;
  }
}

/** What identifies a request for Idempotency-Key purposes: method, path, account and body. */
export interface FingerprintInput {
  /** HTTP method; compared upper-cased. */
  readonly method: string;
  /** Request path without the query (`/v1/orders/ord_1/refunds`). */
  readonly path: string;
  /** The authenticated account the key belongs to. */
  readonly account: string;
  /** The parsed JSON body, or `undefined` when the request had none. */
  readonly body?: unknown;
}

const encoder = new TextEncoder();
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/**
 * SHA-256 (hex) over method, path, account and the canonical JSON of the body: two requests
 * with the same fingerprint are "the same request", whatever their whitespace or key order.
 *
 * @example
 * ```ts
 * const a = await requestFingerprint({ method: 'POST', path: '/v1/payments', account: 'acct_1', body: { amount: 5, currency: 'EUR' } });
 * const b = await requestFingerprint({ method: 'post', path: '/v1/payments', account: 'acct_1', body: { currency: 'EUR', amount: 5 } });
 * a === b; // true
 * ```
 */
export async function requestFingerprint(input: FingerprintInput): Promise<string> {
  // A JSON array keeps the fields apart unambiguously; a missing body is distinct from `null`.
  const text = JSON.stringify([
    input.method.toUpperCase(),
    input.path,
    input.account,
    input.body === undefined ? 0 : 1,
    input.body === undefined ? null : canonicalJson(input.body),
  ]);
  // Synchronous SHA-256: WebCrypto's async digest costs a thread-pool round trip (about 0.1 ms
  // under load) on every idempotent request.
  const digest = sha256(encoder.encode(text));
  let hex = '';
  for (const byte of digest) hex += HEX[byte];
  return hex;
}
