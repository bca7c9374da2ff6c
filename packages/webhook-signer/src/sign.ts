import { encodeBase64, parseSigningKey, signedContent } from '@holdfast/webhook-keys';

/** What one delivery attempt signs (https://www.standardwebhooks.com/, "Signature scheme"). */
export interface SignInput {
  /** The event id, sent as `webhook-id`: the receiver's deduplication key. */
  id: string;
  /** Unix time in whole seconds, sent as `webhook-timestamp`. */
  timestamp: number;
  /** The exact bytes sent on the wire, never a re-serialised object. */
  body: string | Uint8Array;
}

/**
 * The three Standard Webhooks headers of a delivery. A type alias, not an interface: an object
 * type alias is assignable to a string-keyed record (an interface is not), so the headers go
 * straight to `@holdfast/webhook-verifier`'s `verify()`, `fetch()` or any `Record<string, string>`.
 */
export type WebhookHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

export interface SignerOptions {
  /**
   * One key, or several during a rotation, each giving its own entry in order: `whsec_`
   * secrets sign `v1,` (HMAC-SHA256), `whsk_` signing keys sign `v1a,` (ed25519), so a
   * rotation can move an endpoint from one scheme to the other. A `whsk_` key is the 32-byte
   * seed or the 64-byte seed and public key (as the Svix server issues them); the public half
   * must be the seed's own, else this throws.
   */
  secrets: string | readonly string[];
}

/** A signer bound to its keys. */
export interface Signer {
  /** The `webhook-signature` value: `v1,<base64>` / `v1a,<base64>` entries separated by spaces. */
  sign(input: SignInput): string;
  /** All three headers for `input`. */
  headers(input: SignInput): WebhookHeaders;
}

/**
 * An HMAC-SHA256 implementation: given a key, a function of the signed prefix (`id.timestamp.`)
 * and the body. Two exist: `@noble/hashes` (portable) and `node:crypto` (Node).
 */
export type HmacSha256 = (key: Uint8Array) => (prefix: string, body: string | Uint8Array) => Uint8Array;

/** An ed25519 implementation (RFC 8032): `@noble/curves` (portable) or `node:crypto` (Node). */
export interface Ed25519 {
  /** Given a 32-byte seed, a function signing whole messages (64-byte signatures). */
  sign(seed: Uint8Array): (message: Uint8Array) => Uint8Array;
  /** The 32-byte public key of a seed. */
  publicKey(seed: Uint8Array): Uint8Array;
}

/**
 * The seed of a parsed `v1a` key, after checking that the public half of a 64-byte `whsk_` is
 * the seed's own: a key pasted together from two pairs would sign with one and publish the other,
 * and every receiver would refuse every delivery. Loud at start instead.
 */
export function checkedSeed(
  ed25519: Ed25519,
  key: { seed: Uint8Array; publicKey?: Uint8Array },
  parameter: string,
): Uint8Array {
  if (key.publicKey !== undefined) {
    const derived = ed25519.publicKey(key.seed);
    const claimed = key.publicKey;
    if (derived.length !== claimed.length || derived.some((byte, i) => byte !== claimed[i])) {
      throw new TypeError(
        `${parameter} is a 64-byte "whsk_" key whose last 32 bytes are not the public key of its first 32 (the seed)`,
      );
    }
  }
  return key.seed;
}

type EntrySigner = (prefix: string, body: string | Uint8Array, content: () => Uint8Array) => string;

/**
 * Binds {@link createSigner} to its crypto. Internal: the package entry points export it applied
 * to `@noble/*` (portable) or `node:crypto` (Node).
 */
export function signerFactory(hmacSha256: HmacSha256, ed25519: Ed25519): (options: SignerOptions) => Signer {
  return (options) => {
    const single = typeof options.secrets === 'string';
    const list = typeof options.secrets === 'string' ? [options.secrets] : [...options.secrets];
    if (list.length === 0) throw new RangeError('secrets must hold at least one secret');
    const entries = list.map((secret, i): EntrySigner => {
      const parameter = single ? 'secrets' : `secrets[${i}]`;
      const key = parseSigningKey(secret, parameter);
      if (key.scheme === 'v1') {
        const mac = hmacSha256(key.secret);
        return (prefix, body) => `v1,${encodeBase64(mac(prefix, body))}`;
      }
      const sign = ed25519.sign(checkedSeed(ed25519, key, parameter));
      return (_prefix, _body, content) => `v1a,${encodeBase64(sign(content()))}`;
    });
    const sign = (input: SignInput): string => {
      if (typeof input.id !== 'string' || input.id.length === 0) {
        throw new TypeError('id must be a non-empty string');
      }
      if (!Number.isSafeInteger(input.timestamp) || input.timestamp < 0) {
        throw new RangeError('timestamp must be a non-negative integer number of seconds');
      }
      const body = input.body;
      if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
        throw new TypeError('body must be a string or a Uint8Array');
      }
      const prefix = `${input.id}.${input.timestamp}.`;
      // The whole message, built once however many v1a keys sign it, and never for v1 alone.
      let bytes: Uint8Array | undefined;
      const content = (): Uint8Array => {
        bytes ??= signedContent(prefix, body);
        return bytes;
      };
      return entries.map((entry) => entry(prefix, body, content)).join(' ');
    };
    return {
      sign,
      headers: (input) => ({
        'webhook-id': input.id,
        'webhook-timestamp': String(input.timestamp),
        'webhook-signature': sign(input),
      }),
    };
  };
}
