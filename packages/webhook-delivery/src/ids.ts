/**
 * A prefixed opaque id (`dlv_…`, `evt_…`): 128 bits from the platform CSPRNG in base64url
 * (CONTRACT section 1).
 */
export function newId(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `${prefix}_${btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')}`;
}
