// The key helpers come from @holdfast/webhook-keys, a private module bundled into this package
// (and into @holdfast/webhook-signer) at build time; declared here so the published types
// stand alone.
import * as keys from '@holdfast/webhook-keys';

/** Secrets shorter than this are refused: an HMAC-SHA256 key below 192 bits is too weak. */
export const MIN_SECRET_BYTES: number = keys.MIN_SECRET_BYTES;
/** The prefix of `v1a` public keys: base64 of the 32-byte ed25519 public key, or of its 44-byte DER SubjectPublicKeyInfo. */
export const PUBLIC_KEY_PREFIX: 'whpk_' = keys.PUBLIC_KEY_PREFIX;

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
export const decodeSecret: (secret: string, parameter?: string) => Uint8Array = keys.decodeSecret;
