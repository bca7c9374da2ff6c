const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * A prefixed opaque id, `<prefix>_` and 128 bits from the platform CSPRNG in base64url
 * (22 characters). Bundled into each package that makes ids, so installing one pulls in no
 * other Holdfast package for them.
 */
export function opaqueId(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let id = `${prefix}_`;
  let i = 0;
  for (; i < 15; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    id += `${ALPHABET[n >>> 18]}${ALPHABET[(n >>> 12) & 63]}${ALPHABET[(n >>> 6) & 63]}${ALPHABET[n & 63]}`;
  }
  const last = bytes[i] as number;
  return `${id}${ALPHABET[last >>> 2]}${ALPHABET[(last & 3) << 4]}`;
}
