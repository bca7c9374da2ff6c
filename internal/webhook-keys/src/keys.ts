import { decodeBase64, encodeBase64 } from './base64';

// Key formats of Standard Webhooks (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#signature-scheme):
// `whsec_` symmetric secrets sign `v1` (HMAC-SHA256); `whsk_` / `whpk_` are the ed25519 signing
// (secret) and verifying (public) keys of `v1a`.

/** The prefix of symmetric `v1` secrets (Standard Webhooks, Svix). */
export const SECRET_PREFIX = 'whsec_';
/**
 * The prefix of `v1a` signing keys: base64 of the 32-byte ed25519 seed (RFC 8032 section 5.1.5),
 * or of the 64-byte seed followed by its public key (the form the Svix server issues).
 */
export const SIGNING_KEY_PREFIX = 'whsk_';
/**
 * The prefix of `v1a` public keys: base64 of the 32-byte ed25519 public key, or of its DER
 * SubjectPublicKeyInfo (RFC 8410 section 4; the form Java's `PublicKey.getEncoded()` writes).
 */
export const PUBLIC_KEY_PREFIX = 'whpk_';
/** Secrets shorter than this are refused: an HMAC-SHA256 key below 192 bits is too weak. */
export const MIN_SECRET_BYTES = 24;
/** Ed25519 seeds and public keys are 32 bytes (RFC 8032 section 5.1.5). */
export const ED25519_KEY_BYTES = 32;

/**
 * The DER SubjectPublicKeyInfo header of every ed25519 public key (RFC 8410 section 4): SEQUENCE
 * (42 bytes) { SEQUENCE (5) { OID 1.3.101.112 }, BIT STRING (33, no unused bits) }, then the key.
 */
export const ED25519_SPKI_PREFIX: Uint8Array = new Uint8Array([
  0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
]);

/**
 * A key that can sign: an HMAC secret (`v1`) or an ed25519 seed (`v1a`). `publicKey` is the
 * public half a 64-byte `whsk_` carried: the signer, which holds the curve, checks that it is
 * the seed's own before signing anything.
 */
export type SigningKey =
  | { scheme: 'v1'; secret: Uint8Array }
  | { scheme: 'v1a'; seed: Uint8Array; publicKey?: Uint8Array };
/** A key that can verify: an HMAC secret (`v1`) or an ed25519 public key (`v1a`). */
export type VerifyingKey = { scheme: 'v1'; secret: Uint8Array } | { scheme: 'v1a'; publicKey: Uint8Array };

/** A new `whsec_` secret: base64 of 32 bytes from the platform CSPRNG. */
export function generateSecret(): string {
  return SECRET_PREFIX + encodeBase64(crypto.getRandomValues(new Uint8Array(32)));
}

function text(value: unknown, parameter: string): string {
  if (typeof value !== 'string') throw new TypeError(`${parameter} must be a string`);
  return value;
}

/**
 * The key bytes of a `whsec_<base64>` secret (the prefix is optional, as in Standard Webhooks).
 * Throws `TypeError` for a secret that is not base64 and `RangeError` for one shorter than
 * {@link MIN_SECRET_BYTES}: a misconfiguration is loud at start, never a silent weak key.
 */
export function decodeSecret(secret: string, parameter = 'secret'): Uint8Array {
  const value = text(secret, parameter);
  const bytes = decodeBase64(value.startsWith(SECRET_PREFIX) ? value.slice(SECRET_PREFIX.length) : value);
  if (bytes === undefined) throw new TypeError(`${parameter} must be "${SECRET_PREFIX}" followed by base64`);
  if (bytes.length < MIN_SECRET_BYTES) {
    throw new RangeError(
      `${parameter} must decode to at least ${MIN_SECRET_BYTES} bytes, got ${bytes.length}`,
    );
  }
  return bytes;
}

function decodePrefixed(value: string, prefix: string, parameter: string): Uint8Array {
  const bytes = decodeBase64(value.slice(prefix.length));
  if (bytes === undefined) throw new TypeError(`${parameter} must be "${prefix}" followed by base64`);
  return bytes;
}

/** The seed of a `whsk_` key (32 bytes), and the public half of the 64-byte form. */
function decodeSigningKey(value: string, parameter: string): SigningKey {
  const bytes = decodePrefixed(value, SIGNING_KEY_PREFIX, parameter);
  if (bytes.length === ED25519_KEY_BYTES) return { scheme: 'v1a', seed: bytes };
  if (bytes.length === 2 * ED25519_KEY_BYTES) {
    return {
      scheme: 'v1a',
      seed: bytes.subarray(0, ED25519_KEY_BYTES),
      publicKey: bytes.subarray(ED25519_KEY_BYTES),
    };
  }
  throw new RangeError(
    `${parameter} must decode to ${ED25519_KEY_BYTES} bytes (the seed) or ${2 * ED25519_KEY_BYTES} (seed and public key), got ${bytes.length}`,
  );
}

/** The 32-byte key of a `whpk_` key, raw or DER SubjectPublicKeyInfo. */
export function decodePublicKey(value: string, parameter: string): Uint8Array {
  const bytes = decodePrefixed(value, PUBLIC_KEY_PREFIX, parameter);
  if (bytes.length === ED25519_KEY_BYTES) return bytes;
  const header = ED25519_SPKI_PREFIX.length;
  if (bytes.length === header + ED25519_KEY_BYTES) {
    for (let i = 0; i < header; i++) {
      if (bytes[i] !== ED25519_SPKI_PREFIX[i]) {
        throw new TypeError(
          `${parameter} decodes to ${bytes.length} bytes but is not an ed25519 SubjectPublicKeyInfo (RFC 8410)`,
        );
      }
    }
    return bytes.subarray(header);
  }
  throw new RangeError(
    `${parameter} must decode to ${ED25519_KEY_BYTES} bytes (the key) or ${header + ED25519_KEY_BYTES} (its DER SubjectPublicKeyInfo), got ${bytes.length}`,
  );
}

/**
 * Parses a key a signer holds: `whsec_` (or unprefixed base64) for `v1`, `whsk_` (32-byte seed
 * or 64-byte seed and public key) for `v1a`. A `whpk_` public key cannot sign: `TypeError`.
 */
export function parseSigningKey(key: string, parameter = 'key'): SigningKey {
  const value = text(key, parameter);
  if (value.startsWith(SIGNING_KEY_PREFIX)) {
    return decodeSigningKey(value, parameter);
  }
  if (value.startsWith(PUBLIC_KEY_PREFIX)) {
    throw new TypeError(
      `${parameter} is a "${PUBLIC_KEY_PREFIX}" public key, which verifies but cannot sign`,
    );
  }
  return { scheme: 'v1', secret: decodeSecret(value, parameter) };
}

/**
 * Parses a key a verifier holds: `whsec_` (or unprefixed base64) for `v1`, `whpk_` (raw 32-byte
 * key or 44-byte DER SubjectPublicKeyInfo) for `v1a`; a 44-byte key with another header is
 * refused (`TypeError`).
 * A `whsk_` signing key is refused (`TypeError`): a receiver needs only the public key, and a
 * signing key copied into a receiver's configuration is a leak waiting to happen.
 */
export function parseVerifyingKey(key: string, parameter = 'key'): VerifyingKey {
  const value = text(key, parameter);
  if (value.startsWith(PUBLIC_KEY_PREFIX)) {
    return { scheme: 'v1a', publicKey: decodePublicKey(value, parameter) };
  }
  if (value.startsWith(SIGNING_KEY_PREFIX)) {
    throw new TypeError(
      `${parameter} is a "${SIGNING_KEY_PREFIX}" signing key: give the verifier its "${PUBLIC_KEY_PREFIX}" public key`,
    );
  }
  return { scheme: 'v1', secret: decodeSecret(value, parameter) };
}
