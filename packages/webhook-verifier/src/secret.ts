import { decodeBase64 } from './base64';

/** Secrets shorter than this are refused: an HMAC-SHA256 key below 192 bits is too weak. */
export const MIN_SECRET_BYTES = 24;

/**
 * The key bytes of a `whsec_<base64>` secret (the prefix is optional, as in Standard Webhooks).
 * Throws `TypeError` for a secret that is not base64 and `RangeError` for one shorter than
 * {@link MIN_SECRET_BYTES}: a misconfiguration is loud at start, never a silent weak key.
 *
 * @example
 * ```ts
 * decodeSecret('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').length; // 24
 * ```
 */
export function decodeSecret(secret: string, parameter = 'secret'): Uint8Array {
  if (typeof secret !== 'string') throw new TypeError(`${parameter} must be a string`);
  const bytes = decodeBase64(secret.startsWith('whsec_') ? secret.slice(6) : secret);
  if (bytes === undefined) throw new TypeError(`${parameter} must be "whsec_" followed by base64`);
  if (bytes.length < MIN_SECRET_BYTES) {
    throw new RangeError(
      `${parameter} must decode to at least ${MIN_SECRET_BYTES} bytes, got ${bytes.length}`,
    );
  }
  return bytes;
}
