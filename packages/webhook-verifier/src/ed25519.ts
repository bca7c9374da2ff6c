import { ed25519 } from '@noble/curves/ed25519';
import type { Ed25519Verify } from './verify';

/**
 * Ed25519 verification on `@noble/curves`: the portable build. Strict RFC 8032 / FIPS 186-5
 * rules (`zip215: false`), as OpenSSL applies them in the node build, so both builds accept
 * exactly the same signatures.
 */
export const ed25519Verify: Ed25519Verify = (publicKey) => (message, signature) => {
  try {
    return ed25519.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
};
