const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
// Random bytes are drawn from the CSPRNG in batches of 256 ids, as Node's randomUUID() does:
// one getRandomValues call per batch instead of one per id.
const BATCH = 16 * 256;
let pool = new Uint8Array(0);
let offset = 0;

/**
 * A prefixed opaque id, `<prefix>_` and 128 bits from the platform CSPRNG in base64url
 * (22 characters): prefixed, opaque, and well above 96 bits of entropy.
 * Works wherever `crypto.getRandomValues` does.
 *
 * @example
 * ```ts
 * opaqueId('evt'); // 'evt_3q2-7wH0u6v1kQf8m9Zr2A'
 * ```
 */
export function opaqueId(prefix: string): string {
  if (offset + 16 > pool.length) {
    pool = crypto.getRandomValues(new Uint8Array(BATCH));
    offset = 0;
  }
  let id = `${prefix}_`;
  let i = offset;
  offset += 16;
  for (const end = i + 15; i < end; i += 3) {
    const n = ((pool[i] as number) << 16) | ((pool[i + 1] as number) << 8) | (pool[i + 2] as number);
    id += `${ALPHABET[n >>> 18]}${ALPHABET[(n >>> 12) & 63]}${ALPHABET[(n >>> 6) & 63]}${ALPHABET[n & 63]}`;
  }
  const last = pool[i] as number;
  // Used bytes are wiped: nothing left in memory tells a later reader an id already handed out.
  pool.fill(0, offset - 16, offset);
  return `${id}${ALPHABET[last >>> 2]}${ALPHABET[(last & 3) << 4]}`;
}

/**
 * A fresh request id: `req_` and 128 bits from the platform CSPRNG in base64url
 * (prefixed, opaque, well above 96 bits of entropy).
 *
 * @example
 * ```ts
 * newRequestId(); // 'req_3q2-7wH0u6v1kQf8m9Zr2A'
 * ```
 */
export function newRequestId(): string {
  return opaqueId('req');
}
