import { createHmac, createSecretKey } from 'node:crypto';
import type { HmacSha256 } from './hmac';

/**
 * HMAC-SHA256 on `node:crypto` (OpenSSL): what the signer and the verifier use under the `node` condition
 * (their package.json "imports" map `#hmac` to it under the `node` condition). A string body goes to OpenSSL as it is,
 * without a copy into bytes first.
 */
export const hmacSha256: HmacSha256 = (key) => {
  const keyObject = createSecretKey(key);
  return (prefix, body) => createHmac('sha256', keyObject).update(prefix).update(body).digest();
};
