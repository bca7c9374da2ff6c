import type { Context } from 'hono';
import { answerFixed, type FixedDocument, fixedDocument } from './fixed-document';

/**
 * A GET handler for a document that never changes while the server runs (an OpenAPI document,
 * an API reference page): `build` runs once, on the first request, and from then on the same
 * bytes are served with a strong ETag (their SHA-256) and `cacheControl`; a request whose
 * `If-None-Match` names the ETag is 304 without a body. Building or serialising such a document
 * per request would let one client spend the CPU of every other.
 *
 * @example
 * ```ts
 * app.get('/openapi.json', servedOnce(() => JSON.stringify(document()), 'application/json'));
 * ```
 */
export function servedOnce(
  build: () => string,
  contentType: string,
  cacheControl = 'no-cache',
): (c: Context) => Promise<Response> {
  let fixed: Promise<FixedDocument> | undefined;
  return async (c) => {
    fixed ??= fixedDocument(build());
    return answerFixed(c, await fixed, contentType, cacheControl);
  };
}
