// Standard base64 (RFC 4648 section 4, https://www.rfc-editor.org/rfc/rfc4648#section-4), padded,
// as Standard Webhooks uses for secrets, keys and signatures. Written out rather than `atob`/`Buffer`
// so it runs the same on every runtime. One behaviour everywhere: decoding never throws; it
// answers `undefined` (or `false`), and callers that configure keys turn that into their own error.
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const TABLE = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i += 1) TABLE[ALPHABET.charCodeAt(i)] = i;

/** How many bytes padded standard base64 `text[start..]` decodes to; -1 when its length cannot be base64. */
export function decodedLength(text: string, start = 0): number {
  const n = text.length - start;
  if (n < 0 || n % 4 !== 0) return -1;
  const pad =
    n === 0 || text.charCodeAt(start + n - 1) !== 61 ? 0 : text.charCodeAt(start + n - 2) === 61 ? 2 : 1;
  return (n / 4) * 3 - pad;
}

/**
 * Decodes padded standard base64 (RFC 4648 section 4) from `text[start..]` into `out` at `at`,
 * `decodedLength(text, start)` bytes, without `Buffer` or `atob` and without allocating, so
 * it runs the same on every runtime. False for anything that is not standard base64.
 */
export function decodeBase64Into(text: string, start: number, out: Uint8Array, at: number): boolean {
  const length = decodedLength(text, start);
  if (length < 0 || at + length > out.length) return false;
  const end = text.length;
  const padFrom = end - (((end - start) / 4) * 3 - length);
  const stop = at + length;
  let o = at;
  for (let i = start; i < end; i += 4) {
    let v = 0;
    for (let j = i; j < i + 4; j += 1) {
      const c = text.charCodeAt(j);
      const d = j >= padFrom ? 0 : c < 128 ? (TABLE[c] ?? -1) : -1;
      if (d < 0) return false;
      v = (v << 6) | d;
    }
    out[o++] = v >>> 16;
    if (o < stop) out[o++] = (v >>> 8) & 255;
    if (o < stop) out[o++] = v & 255;
  }
  return true;
}

/** Decodes padded standard base64; `undefined` for anything else (a caller branches, never catches). */
export function decodeBase64(text: string): Uint8Array | undefined {
  const length = decodedLength(text);
  if (length < 0) return undefined;
  const out = new Uint8Array(length);
  return decodeBase64Into(text, 0, out, 0) ? out : undefined;
}

/** Encodes bytes as padded standard base64 (RFC 4648 section 4). */
export function encodeBase64(bytes: Uint8Array): string {
  let out = '';
  const n = bytes.length;
  let i = 0;
  for (; i + 2 < n; i += 3) {
    const v = ((bytes[i] ?? 0) << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += ALPHABET.charAt(v >>> 18) + ALPHABET.charAt((v >>> 12) & 63);
    out += ALPHABET.charAt((v >>> 6) & 63) + ALPHABET.charAt(v & 63);
  }
  if (i < n) {
    const two = i + 1 < n;
    const v = ((bytes[i] ?? 0) << 16) | (two ? (bytes[i + 1] ?? 0) << 8 : 0);
    out += ALPHABET.charAt(v >>> 18) + ALPHABET.charAt((v >>> 12) & 63);
    out += two ? `${ALPHABET.charAt((v >>> 6) & 63)}=` : '==';
  }
  return out;
}
