const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const TABLE = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i += 1) TABLE[ALPHABET.charCodeAt(i)] = i;

/**
 * Decodes padded standard base64 (RFC 4648 section 4) without `Buffer` or `atob`, so it runs
 * the same on every runtime; `undefined` for anything else (a caller branches, never catches).
 */
export function decodeBase64(text: string): Uint8Array | undefined {
  const n = text.length;
  if (n % 4 !== 0) return undefined;
  const pad = n === 0 || text.charCodeAt(n - 1) !== 61 ? 0 : text.charCodeAt(n - 2) === 61 ? 2 : 1;
  const out = new Uint8Array((n / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < n; i += 4) {
    let v = 0;
    for (let j = i; j < i + 4; j += 1) {
      const c = text.charCodeAt(j);
      const d = j >= n - pad ? 0 : c < 128 ? (TABLE[c] ?? -1) : -1;
      if (d < 0) return undefined;
      v = (v << 6) | d;
    }
    out[o++] = v >>> 16;
    if (o < out.length) out[o++] = (v >>> 8) & 255;
    if (o < out.length) out[o++] = v & 255;
  }
  return out;
}
