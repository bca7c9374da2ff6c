import { hmac } from '@noble/hashes/hmac';
import { sha256 } from '@noble/hashes/sha2';

/** A key's HMAC-SHA256, prepared once: it gives the MAC of `prefix` followed by `body`. */
export type HmacSha256 = (key: Uint8Array) => (prefix: string, body: string | Uint8Array) => Uint8Array;

const encoder = new TextEncoder();

/**
 * HMAC-SHA256 on `@noble/hashes`: the portable build (Deno, Bun, Workers, browsers). The keyed
 * inner and outer states are computed once per secret and cloned per message.
 */
export const hmacSha256: HmacSha256 = (key) => {
  const keyed = hmac.create(sha256, key);
  return (prefix, body) =>
    keyed
      .clone()
      .update(encoder.encode(prefix))
      .update(typeof body === 'string' ? encoder.encode(body) : body)
      .digest();
};
