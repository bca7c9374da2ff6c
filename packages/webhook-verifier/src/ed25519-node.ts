import { createPublicKey, verify } from 'node:crypto';
import type { Ed25519Verify } from './verify-core';

// SPKI wrapping of a raw 32-byte ed25519 public key (RFC 8410 section 4): node:crypto imports
// keys only in DER, PEM or JWK form.
const SPKI_PREFIX = Uint8Array.from([0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]);

/**
 * Ed25519 verification on `node:crypto` (OpenSSL), synchronous: what `#ed25519` (package.json
 * "imports") is under the `node` condition, on Node, Deno and Bun.
 */
export const ed25519Verify: Ed25519Verify = (publicKey) => {
  const der = new Uint8Array(SPKI_PREFIX.length + publicKey.length);
  der.set(SPKI_PREFIX);
  der.set(publicKey, SPKI_PREFIX.length);
  const key = createPublicKey({ key: Buffer.from(der.buffer), format: 'der', type: 'spki' });
  const verifySync = (message: Uint8Array, signature: Uint8Array): boolean => {
    try {
      return verify(null, message, key, signature);
    } catch {
      return false;
    }
  };
  return { verifySync, verify: async (message, signature) => verifySync(message, signature) };
};
