// The key helpers come from @holdfast/webhook-keys, a private module bundled into this package
// (and into @holdfast/webhook-verifier) at build time; declared here so the published types
// stand alone.
import * as keys from '@holdfast/webhook-keys';

/** The prefix of `v1` secrets (Standard Webhooks, Svix). */
export const SECRET_PREFIX: 'whsec_' = keys.SECRET_PREFIX;
/** The prefix of `v1a` signing keys: base64 of the 32-byte ed25519 seed, or of the 64-byte seed and public key. */
export const SIGNING_KEY_PREFIX: 'whsk_' = keys.SIGNING_KEY_PREFIX;
/** The prefix of `v1a` public keys: base64 of the 32-byte ed25519 public key, or of its 44-byte DER SubjectPublicKeyInfo. */
export const PUBLIC_KEY_PREFIX: 'whpk_' = keys.PUBLIC_KEY_PREFIX;
/** Secrets shorter than this are refused: HMAC-SHA256 keys below 192 bits are too weak to sign payments. */
export const MIN_SECRET_BYTES: number = keys.MIN_SECRET_BYTES;

/**
 * Padded standard base64 (RFC 4648 section 4), without `Buffer`, for every runtime.
 *
 * @example
 * ```ts
 * encodeBase64(new TextEncoder().encode('foo')); // 'Zm9v'
 * ```
 */
export const encodeBase64: (bytes: Uint8Array) => string = keys.encodeBase64;

/**
 * Decodes padded standard base64; `undefined` for anything else (never throws).
 *
 * @example
 * ```ts
 * decodeBase64('Zm9v'); // Uint8Array [102, 111, 111]
 * decodeBase64('not base64!'); // undefined
 * ```
 */
export const decodeBase64: (text: string) => Uint8Array | undefined = keys.decodeBase64;

/**
 * A new secret: `whsec_` followed by base64 of 32 bytes from the platform CSPRNG. Show it once,
 * store it encrypted or as the only copy.
 *
 * @example
 * ```ts
 * const secret = generateSecret(); // 'whsec_q2q1vS0m...='
 * ```
 */
export const generateSecret: () => string = keys.generateSecret;

/**
 * The key bytes of a `whsec_<base64>` secret (the prefix is optional, as in Standard Webhooks).
 * Throws `TypeError` for a secret that is not base64 and `RangeError` for one shorter than 24 bytes.
 *
 * @example
 * ```ts
 * decodeSecret(generateSecret()).length; // 32
 * ```
 */
export const decodeSecret: (secret: string, parameter?: string) => Uint8Array = keys.decodeSecret;
