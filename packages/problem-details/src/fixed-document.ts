import type { Context } from 'hono';

/** A document that never changes while the server runs: its bytes and their strong ETag. */
export interface FixedDocument {
  readonly bytes: Uint8Array<ArrayBuffer>;
  readonly etag: string;
}

const encoder = new TextEncoder();

/** `text` as UTF-8 bytes with a strong ETag: the SHA-256 of the bytes, base64url. */
export async function fixedDocument(text: string): Promise<FixedDocument> {
  const bytes = encoder.encode(text);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  const base64 = btoa(String.fromCharCode(...digest));
  const tag = base64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  return { bytes, etag: `"${tag}"` };
}

/**
 * Whether `If-None-Match` names `etag` (or is `*`). The comparison is weak, as RFC 9110 section
 * 13.1.2 requires for this header: `W/"x"` matches `"x"`.
 */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((member) => {
    const tag = member.trim();
    return tag === '*' || (tag.startsWith('W/') ? tag.slice(2) : tag) === etag;
  });
}

/**
 * Answers `document` with its ETag and `Cache-Control`, or 304 without a body when the request's
 * `If-None-Match` already names it.
 */
export function answerFixed(
  c: Context,
  document: FixedDocument,
  contentType: string,
  cacheControl: string,
): Response {
  c.header('ETag', document.etag);
  c.header('Cache-Control', cacheControl);
  if (noneMatch(c.req.header('If-None-Match'), document.etag)) return c.body(null, 304);
  c.header('Content-Type', contentType);
  return c.body(document.bytes, 200);
}
