import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { receivingWebhooks } from './docs-webhooks';
import type { JsonObject } from './json-value';
import { htmlPage, renderReference } from './reference/index';

/** The page's title and heading: what this server is, not "... API reference" twice over. */
const TITLE = 'Holdfast reference server API';

/**
 * `/docs`: the API reference rendered from the OpenAPI document by `./reference`, with how to
 * get a key, the links a reader needs next and the "Receiving webhooks" section.
 */
export function renderDocs(document: JsonObject): string {
  const info =
    typeof document.info === 'object' && document.info !== null && !Array.isArray(document.info)
      ? document.info
      : {};
  return renderReference(
    { ...document, info: { ...info, title: TITLE } },
    {
      intro: [
        '<h2 id="getting-a-key">Getting an API key</h2>',
        '<p>Every <code>/v1</code> call takes <code>Authorization: Bearer &lt;key&gt;</code>. The first <code>npm start</code> on an empty database prints a demo key for the account <code>acct_demo</code> with every scope (shown that once). Another key, while the server runs: <code>npm run keys:create -w @holdfast/reference-server -- --account acct_demo --scopes "*"</code>. Keys of the form <code>hf_test_...</code> see test data, <code>hf_live_...</code> live data.</p>',
        '<p>Machine-readable: <a href="/openapi.json"><code>/openapi.json</code></a> (OpenAPI 3.1). Errors: <a href="/problems">problem types</a>. Dashboard: <a href="/dashboard">/dashboard</a> (sign in with the same key).</p>',
      ].join(''),
      sections: [receivingWebhooks(document)],
      layout: (_title, body) => htmlPage(TITLE, body),
    },
  );
}

/** A document that never changes while the server runs: its bytes and their strong ETag. */
interface Fixed {
  readonly bytes: Uint8Array<ArrayBuffer>;
  readonly etag: string;
}

/**
 * A GET handler for a document built once, on its first request (`build` runs once), then
 * served as the same bytes with a strong ETag (their SHA-256) and `Cache-Control: no-cache` (a
 * client may keep it but asks again, and gets 304 when unchanged): rebuilding or re-serialising
 * it per request let one client spend the CPU of every other (issue 35).
 */
export function servedOnce(build: () => string, contentType: string): (c: Context) => Response {
  let fixed: Fixed | undefined;
  return (c) => {
    fixed ??= (() => {
      const bytes = new Uint8Array(Buffer.from(build(), 'utf8'));
      return { bytes, etag: `"${createHash('sha256').update(bytes).digest('base64url')}"` };
    })();
    c.header('ETag', fixed.etag);
    c.header('Cache-Control', 'no-cache');
    const etag = fixed.etag;
    const match = c.req
      .header('If-None-Match')
      ?.split(',')
      .some((member) => {
        const tag = member.trim();
        return tag === '*' || (tag.startsWith('W/') ? tag.slice(2) : tag) === etag;
      });
    if (match) return c.body(null, 304);
    c.header('Content-Type', contentType);
    return c.body(fixed.bytes, 200);
  };
}
