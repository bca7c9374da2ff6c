import { createPrivateKey, createPublicKey, type KeyObject, sign } from 'node:crypto';
import type { Ed25519 } from './sign';

// PKCS #8 wrapping of a raw 32-byte ed25519 seed (RFC 8410 section 7): node:crypto imports keys
// only in DER, PEM or JWK form.
const PKCS8_PREFIX = Uint8Array.from([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
]);

function privateKey(seed: Uint8Array): KeyObject {
  const der = new Uint8Array(PKCS8_PREFIX.length + seed.length);
  der.set(PKCS8_PREFIX);
  der.set(seed, PKCS8_PREFIX.length);
  return createPrivateKey({ key: Buffer.from(der.buffer), format: 'der', type: 'pkcs8' });
}

/**
 * Ed25519 (RFC 8032) on `node:crypto` (OpenSSL): what `#ed25519` (package.json "imports") is
 * under the `node` condition, on Node, Deno and Bun.
 */
export const ed25519Signing: Ed25519 = {
  sign: (seed) => {
    const key = privateKey(seed);
    return (message) => sign(null, message, key);
  },
  publicKey: (seed) => {
    // SPKI DER of an ed25519 key ends with the raw 32-byte key (RFC 8410 section 4).
    const spki = createPublicKey(privateKey(seed)).export({ format: 'der', type: 'spki' });
    return new Uint8Array(spki.subarray(spki.length - 32));
  },
};
