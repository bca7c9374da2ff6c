import { receivingWebhooks } from './docs-webhooks';
import { page } from './html';
import type { JsonObject } from './json-value';
import { renderReference } from './reference/index';

/**
 * `/docs`: the API reference rendered from the OpenAPI document by `@holdfast/api-reference`,
 * with the links a reader needs next and the "Receiving webhooks" section.
 */
export function renderDocs(document: JsonObject): string {
  return renderReference(document, {
    intro:
      '<p>Machine-readable: <a href="/openapi.json"><code>/openapi.json</code></a> (OpenAPI 3.1). Errors: <a href="/problems">problem types</a>. Dashboard: <a href="/dashboard">/dashboard</a>.</p>',
    sections: [receivingWebhooks(document)],
    layout: page,
  });
}
