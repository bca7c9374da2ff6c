/**
 * A fresh request id: `req_` and 128 bits from the platform CSPRNG in base64url
 * (CONTRACT section 1: prefixed, opaque, at least 96 bits).
 *
 * @example
 * ```ts
 * newRequestId(); // 'req_3q2-7wH0u6v1kQf8m9Zr2A'
 * ```
 */
export function newRequestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `req_${btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')}`;
}
