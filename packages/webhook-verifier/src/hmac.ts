import { hmac } from '@noble/hashes/hmac';
import { sha256 } from '@noble/hashes/sha2';
import type { HmacSha256 } from './verify';

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
