import { hmac } from '@noble/hashes/hmac';
import { sha256 } from '@noble/hashes/sha2';
import { encodeBase64 } from './base64';
import { decodeSecret } from './secret';

/** What one delivery attempt signs (SPEC section 6, "Signing"). */
export interface SignInput {
  /** The event id, sent as `webhook-id`: the receiver's deduplication key. */
  id: string;
  /** Unix time in whole seconds, sent as `webhook-timestamp`. */
  timestamp: number;
  /** The exact bytes sent on the wire, never a re-serialised object. */
  body: string | Uint8Array;
}

/** The three Standard Webhooks headers of a delivery. */
export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export interface SignerOptions {
  /** One secret, or several during a rotation (each gives its own `v1,` entry). */
  secrets: string | readonly string[];
}

/** A signer bound to its secrets. */
export interface Signer {
  /** The `webhook-signature` value: `v1,<base64>` entries separated by spaces. */
  sign(input: SignInput): string;
  /** All three headers for `input`. */
  headers(input: SignInput): WebhookHeaders;
}

const encoder = new TextEncoder();

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * Builds a signer. The signed content is `id.timestamp.body` over the body's exact bytes
 * (SPEC section 6 rules 1 to 3), HMAC-SHA256, base64; byte-for-byte what `standardwebhooks`
 * and `svix` verify.
 *
 * @example
 * ```ts
 * const signer = createSigner({ secrets: [newSecret, oldSecret] });
 * const body = JSON.stringify(event);
 * await fetch(url, {
 *   method: 'POST',
 *   headers: { ...signer.headers({ id: event.id, timestamp: Math.floor(Date.now() / 1000), body }), 'content-type': 'application/json' },
 *   body,
 * });
 * ```
 */
export function createSigner(options: SignerOptions): Signer {
  const list = typeof options.secrets === 'string' ? [options.secrets] : [...options.secrets];
  if (list.length === 0) throw new RangeError('secrets must hold at least one secret');
  const keys = list.map((secret, i) => decodeSecret(secret, `secrets[${i}]`));
  const sign = (input: SignInput): string => {
    if (typeof input.id !== 'string' || input.id.length === 0) {
      throw new TypeError('id must be a non-empty string');
    }
    if (!Number.isSafeInteger(input.timestamp) || input.timestamp < 0) {
      throw new RangeError('timestamp must be a non-negative integer number of seconds');
    }
    const body = typeof input.body === 'string' ? encoder.encode(input.body) : input.body;
    if (!(body instanceof Uint8Array)) throw new TypeError('body must be a string or a Uint8Array');
    const content = concat(encoder.encode(`${input.id}.${input.timestamp}.`), body);
    return keys.map((key) => `v1,${encodeBase64(hmac(sha256, key, content))}`).join(' ');
  };
  return {
    sign,
    headers: (input) => ({
      'webhook-id': input.id,
      'webhook-timestamp': String(input.timestamp),
      'webhook-signature': sign(input),
    }),
  };
}
