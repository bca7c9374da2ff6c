import { hmac } from '@noble/hashes/hmac';
import { sha256 } from '@noble/hashes/sha2';

/**
 * The cursor signing keys: the `current` key id signs new cursors, every listed key verifies,
 * so a key can rotate without breaking cursors already handed out.
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
const imported = new WeakMap<
  Keyring,
  Map<string, { secret: unknown; mac: (message: Uint8Array) => Uint8Array }>
>();
// Keyrings already found valid, with what they held then: `paginate` checks on every call, and
// an unchanged keyring is confirmed by comparing its entries, without encoding the secrets again.
const checked = new WeakMap<Keyring, { current: string; entries: [string, unknown][] }>();

function unchanged(keyring: Keyring): boolean {
  const seen = checked.get(keyring);
  if (!seen || seen.current !== keyring.current) return false;
  const entries = Object.entries(keyring.keys);
  if (entries.length !== seen.entries.length) return false;
  for (let i = 0; i < entries.length; i += 1) {
    const [kid, secret] = entries[i] as [string, unknown];
    const [seenKid, seenSecret] = seen.entries[i] as [string, unknown];
    if (kid !== seenKid || secret !== seenSecret) return false;
  }
  return true;
}

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
  if (unchanged(keyring)) return;
  for (const [kid, secret] of Object.entries(keyring.keys)) {
    if (!KEY_ID.test(kid)) throw new TypeError(`keyring key id "${kid}" must match ${KEY_ID}`);
    secretBytes(kid, secret);
  }
  if (typeof keyring.current !== 'string' || !Object.hasOwn(keyring.keys, keyring.current)) {
    throw new TypeError('keyring.current must name one of keyring.keys');
  }
  checked.set(keyring, { current: keyring.current, entries: Object.entries(keyring.keys) });
}

/**
 * @internal A MAC function for a key id, or undefined when the ring lacks it. The HMAC state
 * after the key's inner and outer pads is kept per secret and cloned per message, which saves
 * two of the four or five SHA-256 compressions a cursor MAC takes.
 */
export function macFor(keyring: Keyring, kid: string): ((message: Uint8Array) => Uint8Array) | undefined {
  if (!KEY_ID.test(kid) || !Object.hasOwn(keyring.keys, kid)) return undefined;
  const secret = keyring.keys[kid];
  let cache = imported.get(keyring);
  if (!cache) {
    cache = new Map();
    imported.set(keyring, cache);
  }
  let entry = cache.get(kid);
  // Keyed by the secret too: a key id given a new secret must not sign with the old one.
  if (!entry || entry.secret !== secret) {
    const keyed = hmac.create(sha256, secretBytes(kid, secret));
    entry = { secret, mac: (message) => keyed.clone().update(message).digest() };
    cache.set(kid, entry);
  }
  return entry.mac;
}
