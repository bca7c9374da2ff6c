import { createHash, randomBytes } from 'node:crypto';

/** Test and live keys are two disjoint worlds, as Stripe's `sk_test_`/`sk_live_`. */
export type KeyMode = 'live' | 'test';

/**
 * SHA-256 of a key, hex: what a store keeps instead of the key. The keys are 192-bit random
 * strings, so a fast hash is enough: there is nothing to brute-force, unlike a password.
 *
 * @example
 * ```ts
 * hashKey('hf_test_abc'); // 64 hex characters
 * ```
 */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/**
 * A new key: `<prefix>_<mode>_` and 192 random bits in base64url. Show it once; store only
 * {@link hashKey} of it.
 *
 * @example
 * ```ts
 * generateKey('live'); // 'hf_live_…' (32 characters after the mode)
 * generateKey('test', { prefix: 'acme' }); // 'acme_test_…'
 * ```
 */
export function generateKey(mode: KeyMode = 'test', options: { readonly prefix?: string } = {}): string {
  const { prefix = 'hf' } = options;
  return `${prefix}_${mode}_${randomBytes(24).toString('base64url')}`;
}

/**
 * The key a `Bearer` credential carries and its mode, or `undefined` when the value is not
 * `Bearer <prefix>_(live|test)_<16 to 128 base64url characters>` (RFC 6750 section 2.1; the
 * scheme is case-insensitive).
 *
 * @example
 * ```ts
 * parseBearer('Bearer hf_test_0123456789abcdef'); // { key: 'hf_test_0123456789abcdef', mode: 'test' }
 * parseBearer('Basic dXNlcjpwYXNz'); // undefined
 * ```
 */
export function parseBearer(
  header: string,
  options: { readonly prefix?: string } = {},
): { readonly key: string; readonly mode: KeyMode } | undefined {
  const { prefix = 'hf' } = options;
  const match = bearerPattern(prefix).exec(header);
  const key = match?.[1];
  if (key === undefined) return undefined;
  return { key, mode: key.startsWith(`${prefix}_live_`) ? 'live' : 'test' };
}

const patterns = new Map<string, RegExp>();

function bearerPattern(prefix: string): RegExp {
  let pattern = patterns.get(prefix);
  if (!pattern) {
    const escaped = prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    pattern = new RegExp(`^Bearer\\s+(${escaped}_(?:live|test)_[A-Za-z0-9_-]{16,128})\\s*$`, 'i');
    patterns.set(prefix, pattern);
  }
  return pattern;
}
