import { ed25519 } from '@noble/curves/ed25519';
import type { Ed25519 } from './sign';

/** Ed25519 (RFC 8032) on `@noble/curves`: the portable build. */
export const ed25519Signing: Ed25519 = {
  sign: (seed) => (message) => ed25519.sign(message, seed),
  publicKey: (seed) => ed25519.getPublicKey(seed),
};
