/**
 * The cursor signing keys: the `current` key id signs new cursors, every listed key verifies,
 * so a key can rotate without breaking cursors already handed out (pagination rule 7).
 */
export interface Keyring {
  /** The key id that signs new cursors; must be in `keys`. */
  readonly current: string;
  /** Key id (1 to 32 of `A-Z a-z 0-9 _ -`) to secret (at least 32 bytes; a string is UTF-8). */
  readonly keys: Readonly<Record<string, string | Uint8Array>>;
}

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
/** HMAC-SHA256 keys shorter than the hash output weaken it (RFC 2104 section 3). */
export const MIN_SECRET_BYTES = 32;

const encoder = new TextEncoder();
const imported = new WeakMap<Keyring, Map<string, Uint8Array>>();

function secretBytes(kid: string, secret: unknown): Uint8Array<ArrayBuffer> {
  if (typeof secret === 'string') return secretBytes(kid, encoder.encode(secret));
  if (!(secret instanceof Uint8Array)) {
    throw new TypeError(`keyring key "${kid}" must be a string or a Uint8Array`);
  }
  if (secret.byteLength < MIN_SECRET_BYTES) {
    throw new RangeError(`keyring key "${kid}" must be at least ${MIN_SECRET_BYTES} bytes`);
  }
  return new Uint8Array(secret);
}

/**
 * Throws `TypeError` / `RangeError` naming what is wrong with a keyring: a bad key id, a
 * missing current key, or a secret shorter than 32 bytes. `paginate` calls it on every use.
 *
 * @example
 * ```ts
 * checkKeyring({ current: 'k2', keys: { k2: process.env.CURSOR_KEY_2 ?? '', k1: process.env.CURSOR_KEY_1 ?? '' } });
 * ```
 */
export function checkKeyring(keyring: Keyring): void {
  if (typeof keyring !== 'object' || keyring === null || typeof keyring.keys !== 'object') {
    throw new TypeError('keyring must be { current, keys }');
  }
  for (const [kid, secret] of Object.entries(keyring.keys)) {
    if (!KEY_ID.test(kid)) throw new TypeError(`keyring key id "${kid}" must match ${KEY_ID}`);
    secretBytes(kid, secret);
  }
  if (typeof keyring.current !== 'string' || !Object.hasOwn(keyring.keys, keyring.current)) {
    throw new TypeError('keyring.current must name one of keyring.keys');
  }
}

/** @internal The HMAC-SHA256 key bytes for a key id, or undefined when the ring lacks it. */
export function hmacKey(keyring: Keyring, kid: string): Uint8Array | undefined {
  if (!KEY_ID.test(kid) || !Object.hasOwn(keyring.keys, kid)) return undefined;
  let cache = imported.get(keyring);
  if (!cache) {
    cache = new Map();
    imported.set(keyring, cache);
  }
  let key = cache.get(kid);
  if (!key) {
    key = secretBytes(kid, keyring.keys[kid]);
    cache.set(kid, key);
  }
  return key;
}
