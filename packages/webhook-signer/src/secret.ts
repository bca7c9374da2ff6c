import { decodeBase64, encodeBase64 } from './base64';

/** The prefix Standard Webhooks and Svix give secrets. */
export const SECRET_PREFIX = 'whsec_';
/** Secrets shorter than this are refused: HMAC-SHA256 keys below 192 bits are too weak to sign payments. */
export const MIN_SECRET_BYTES = 24;

/**
 * A new secret: `whsec_` followed by base64 of 32 bytes from the platform CSPRNG
 * (SPEC section 5; CONTRACT section 5). Show it once, store it encrypted or as the only copy.
 *
 * @example
 * ```ts
 * const secret = generateSecret(); // 'whsec_q2q1vS0m...='
 * ```
 */
export function generateSecret(): string {
  return SECRET_PREFIX + encodeBase64(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * The key bytes of a `whsec_<base64>` secret (the prefix is optional, as in Standard Webhooks).
 * Throws `TypeError` for a secret that is not base64 and `RangeError` for one shorter than 24 bytes.
 *
 * @example
 * ```ts
 * decodeSecret(generateSecret()).length; // 32
 * ```
 */
export function decodeSecret(secret: string, parameter = 'secret'): Uint8Array {
  if (typeof secret !== 'string') throw new TypeError(`${parameter} must be a string`);
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  let bytes: Uint8Array;
  try {
    bytes = decodeBase64(encoded);
  } catch {
    throw new TypeError(`${parameter} must be "whsec_" followed by base64`);
  }
  if (bytes.length < MIN_SECRET_BYTES) {
    throw new RangeError(
      `${parameter} must decode to at least ${MIN_SECRET_BYTES} bytes, got ${bytes.length}`,
    );
  }
  return bytes;
}
