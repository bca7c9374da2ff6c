const encoder = new TextEncoder();

/**
 * The bytes Standard Webhooks signs, `${id}.${timestamp}.` then the body's exact bytes
 * (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#signature-scheme),
 * in one buffer: ed25519 (RFC 8032) is not streamed, so `v1a` needs the whole message at once.
 * A string body is encoded as UTF-8 together with the prefix, in one copy.
 */
export function signedContent(prefix: string, body: string | Uint8Array): Uint8Array {
  if (typeof body === 'string') return encoder.encode(prefix + body);
  const head = encoder.encode(prefix);
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}
