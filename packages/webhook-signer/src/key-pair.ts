import {
  ED25519_KEY_BYTES,
  encodeBase64,
  PUBLIC_KEY_PREFIX,
  parseSigningKey,
  SIGNING_KEY_PREFIX,
} from '@holdfast/webhook-keys';
import { checkedSeed, type Ed25519 } from './sign';

/** A `v1a` key pair: the sender keeps `secretKey`, receivers are given `publicKey`. */
export interface KeyPair {
  /** `whsk_` + base64 of the 32-byte ed25519 seed. Secret: give it to `createSigner` only. */
  secretKey: string;
  /** `whpk_` + base64 of the 32-byte ed25519 public key. Public: give it to verifiers. */
  publicKey: string;
}

/** Binds the key helpers to an ed25519 implementation (portable or `node:crypto`). */
export function keyPairFactory(ed25519: Ed25519): {
  generateKeyPair: () => KeyPair;
  publicKeyOf: (secretKey: string) => string;
} {
  const publicKeyOf = (secretKey: string): string => {
    const key = parseSigningKey(secretKey, 'secretKey');
    if (key.scheme !== 'v1a') throw new TypeError(`secretKey must start with "${SIGNING_KEY_PREFIX}"`);
    return PUBLIC_KEY_PREFIX + encodeBase64(ed25519.publicKey(checkedSeed(ed25519, key, 'secretKey')));
  };
  return {
    generateKeyPair: () => {
      // RFC 8032 section 5.1.5: the private key is 32 random bytes (the seed).
      const secretKey =
        SIGNING_KEY_PREFIX + encodeBase64(crypto.getRandomValues(new Uint8Array(ED25519_KEY_BYTES)));
      return { secretKey, publicKey: publicKeyOf(secretKey) };
    },
    publicKeyOf,
  };
}
