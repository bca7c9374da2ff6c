import { decodeBase64, encodeBase64 } from './base64';

// Key formats of Standard Webhooks (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#signature-scheme):
// `whsec_` symmetric secrets sign `v1` (HMAC-SHA256); `whsk_` / `whpk_` are the ed25519 signing
// (secret) and verifying (public) keys of `v1a`.

/** The prefix of symmetric `v1` secrets (Standard Webhooks, Svix). */
export const SECRET_PREFIX = 'whsec_';
/** The prefix of `v1a` signing keys: base64 of the 32-byte ed25519 seed (RFC 8032 section 5.1.5). */
export const SIGNING_KEY_PREFIX = 'whsk_';
/** The prefix of `v1a` public keys: base64 of the 32-byte ed25519 public key. */
export const PUBLIC_KEY_PREFIX = 'whpk_';
/** Secrets shorter than this are refused: an HMAC-SHA256 key below 192 bits is too weak. */
export const MIN_SECRET_BYTES = 24;
/** Ed25519 seeds and public keys are 32 bytes (RFC 8032 section 5.1.5). */
export const ED25519_KEY_BYTES = 32;

/** A key that can sign: an HMAC secret (`v1`) or an ed25519 seed (`v1a`). */
export type SigningKey = { scheme: 'v1'; secret: Uint8Array } | { scheme: 'v1a'; seed: Uint8Array };
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

function decodeEd25519(value: string, prefix: string, parameter: string): Uint8Array {
  const bytes = decodeBase64(value.slice(prefix.length));
  if (bytes === undefined) throw new TypeError(`${parameter} must be "${prefix}" followed by base64`);
  if (bytes.length !== ED25519_KEY_BYTES) {
    throw new RangeError(`${parameter} must decode to ${ED25519_KEY_BYTES} bytes, got ${bytes.length}`);
  }
  return bytes;
}

/**
 * Parses a key a signer holds: `whsec_` (or unprefixed base64) for `v1`, `whsk_` for `v1a`.
 * A `whpk_` public key cannot sign: `TypeError`.
 */
export function parseSigningKey(key: string, parameter = 'key'): SigningKey {
  const value = text(key, parameter);
  if (value.startsWith(SIGNING_KEY_PREFIX)) {
    return { scheme: 'v1a', seed: decodeEd25519(value, SIGNING_KEY_PREFIX, parameter) };
  }
  if (value.startsWith(PUBLIC_KEY_PREFIX)) {
    throw new TypeError(
      `${parameter} is a "${PUBLIC_KEY_PREFIX}" public key, which verifies but cannot sign`,
    );
  }
  return { scheme: 'v1', secret: decodeSecret(value, parameter) };
}

/**
 * Parses a key a verifier holds: `whsec_` (or unprefixed base64) for `v1`, `whpk_` for `v1a`.
 * A `whsk_` signing key is refused (`TypeError`): a receiver needs only the public key, and a
 * signing key copied into a receiver's configuration is a leak waiting to happen.
 */
export function parseVerifyingKey(key: string, parameter = 'key'): VerifyingKey {
  const value = text(key, parameter);
  if (value.startsWith(PUBLIC_KEY_PREFIX)) {
    return { scheme: 'v1a', publicKey: decodeEd25519(value, PUBLIC_KEY_PREFIX, parameter) };
  }
  if (value.startsWith(SIGNING_KEY_PREFIX)) {
    throw new TypeError(
      `${parameter} is a "${SIGNING_KEY_PREFIX}" signing key: give the verifier its "${PUBLIC_KEY_PREFIX}" public key`,
    );
  }
  return { scheme: 'v1', secret: decodeSecret(value, parameter) };
}
