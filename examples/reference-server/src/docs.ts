import { htmlPage, renderReference } from '@holdfast/problem-details';
import { receivingWebhooksSection } from '@holdfast/webhook-portal';
import type { JsonObject } from './json-value';

/** The page's title and heading: what this server is, not "... API reference" twice over. */
const TITLE = 'Holdfast reference server API';

/**
 * `/docs`: the API reference rendered from the OpenAPI document (`renderReference`), with how to
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
      sections: [receivingWebhooksSection(document)],
      layout: (_title, body) => htmlPage(TITLE, body),
    },
  );
}
