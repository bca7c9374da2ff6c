import { createHmac, createSecretKey } from 'node:crypto';
import type { HmacSha256 } from './verify';

/**
 * HMAC-SHA256 on `node:crypto` (OpenSSL): the build Node gets through the `node` export
 * condition. The tsup node build swaps this file in for `./hmac`. A string body goes to OpenSSL as
 * it is, without a copy into bytes first.
 */
export const hmacSha256: HmacSha256 = (key) => {
  const keyObject = createSecretKey(key);
  return (prefix, body) => createHmac('sha256', keyObject).update(prefix).update(body).digest();
};
