import { escapeHtml, htmlPage } from './html-page';

/** A JSON value, as the renderer walks the document. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

/** An OpenAPI 3.1 document, as JSON (`app.getOpenAPI31Document(...)`, or parsed from a file). */
export type OpenApiDocument = { readonly [key: string]: JsonValue };

/** A section of the page beside the operations: its navigation entry and its HTML. */
export interface ReferenceSection {
  /** `<li>` entries for the navigation (HTML). */
  readonly nav: string;
  /** The section (HTML), placed after the operations and before the schemas. */
  readonly html: string;
}

/** Options of {@link renderReference}. */
export interface ReferenceOptions {
  /** HTML after the API's description: where the machine-readable document and errors live. */
  readonly intro?: string;
  /** Sections of the service's own (receiving its webhooks, say), after the operations. */
  readonly sections?: readonly ReferenceSection[];
  /** Wraps the page's title and body into a whole page. Default {@link htmlPage}. */
  readonly layout?: (title: string, body: string) => string;
}

const isObject = (value: JsonValue | undefined): value is OpenApiDocument =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

function text(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

function schemaLink(schema: JsonValue | undefined): string {
  if (!isObject(schema)) return '';
  const ref = text(schema.$ref);
  if (ref) {
    const name = ref.split('/').pop() ?? ref;
    return `<a href="#schema-${escapeHtml(name)}"><code>${escapeHtml(name)}</code></a>`;
  }
  if (schema.type === 'array' && isObject(schema.items)) return `array of ${schemaLink(schema.items)}`;
  const enumValues = Array.isArray(schema.enum)
    ? ` (${schema.enum.map((v) => `<code>${escapeHtml(String(v))}</code>`).join(', ')})`
    : '';
  return `<code>${escapeHtml(text(schema.type) || 'object')}</code>${enumValues}`;
}

/**
 * A readable, self-contained HTML reference rendered from an OpenAPI 3.1 document: a
 * navigation by tag, every operation with its parameters, body and responses (and whether it
 * needs credentials), the service's own sections, then every schema. All text from the document
 * is escaped. Render it once at start: the document does not change while the service runs.
 *
 * @example
 * ```ts
 * const html = renderReference(document, { intro: '<p><a href="/openapi.json">openapi.json</a></p>' });
 * ```
 */
export function renderReference(document: OpenApiDocument, options: ReferenceOptions = {}): string {
  const { intro = '', sections = [], layout = htmlPage } = options;
  const info = isObject(document.info) ? document.info : {};
  const paths = isObject(document.paths) ? document.paths : {};
  const operations: { tag: string; html: string; anchor: string; label: string }[] = [];
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      const tag = Array.isArray(op.tags) ? text(op.tags[0]) || 'Other' : 'Other';
      const anchor = `${method}-${path.replace(/[^a-z0-9]+/gi, '-')}`;
      const params = Array.isArray(op.parameters) ? op.parameters.filter(isObject) : [];
      const paramRows = params
        .map(
          (p) =>
            `<tr><td><code>${escapeHtml(text(p.name))}</code></td><td>${escapeHtml(text(p.in))}</td><td>${p.required ? 'yes' : ''}</td><td>${schemaLink(p.schema)}</td><td>${escapeHtml(text(p.description) || (isObject(p.schema) ? text(p.schema.description) : ''))}</td></tr>`,
        )
        .join('');
      const body =
        isObject(op.requestBody) && isObject(op.requestBody.content) ? op.requestBody.content : undefined;
      const bodyHtml = body
        ? Object.entries(body)
            .map(
              ([type, media]) =>
                `<p>Body (<code>${escapeHtml(type)}</code>): ${isObject(media) ? schemaLink(media.schema) : ''}</p>`,
            )
            .join('')
        : '';
      const responses = isObject(op.responses) ? op.responses : {};
      const responseRows = Object.entries(responses)
        .map(([status, response]) => {
          const r = isObject(response) ? response : {};
          const content = isObject(r.content) ? r.content : {};
          const schemas = Object.entries(content)
            .map(
              ([type, media]) =>
                `<code>${escapeHtml(type)}</code> ${isObject(media) ? schemaLink(media.schema) : ''}`,
            )
            .join('<br>');
          return `<tr><td><strong>${escapeHtml(status)}</strong></td><td>${escapeHtml(text(r.description))}</td><td>${schemas}</td></tr>`;
        })
        .join('');
      const secured = !(Array.isArray(op.security) && op.security.length === 0);
      operations.push({
        tag,
        anchor,
        label: `${method.toUpperCase()} ${path}`,
        html: `<section class="op" id="${anchor}"><h3><span class="method">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
<p><strong>${escapeHtml(text(op.summary))}</strong>${secured ? ' · requires <code>Authorization: Bearer</code>' : ' · no API key'}</p>
${text(op.description) ? `<p>${escapeHtml(text(op.description))}</p>` : ''}
${paramRows ? `<table><thead><tr><th>parameter</th><th>in</th><th>required</th><th>type</th><th>description</th></tr></thead><tbody>${paramRows}</tbody></table>` : ''}
${bodyHtml}
<table><thead><tr><th>status</th><th>meaning</th><th>body</th></tr></thead><tbody>${responseRows}</tbody></table></section>`,
      });
    }
  }
  const tags = [...new Set(operations.map((op) => op.tag))];
  const components =
    isObject(document.components) && isObject(document.components.schemas) ? document.components.schemas : {};
  const schemaHtml = Object.entries(components)
    .map(
      ([name, schema]) =>
        `<section id="schema-${escapeHtml(name)}"><h3><code>${escapeHtml(name)}</code></h3><pre>${escapeHtml(JSON.stringify(schema, null, 2))}</pre></section>`,
    )
    .join('');
  const nav = tags
    .map(
      (tag) =>
        `<li><strong>${escapeHtml(tag)}</strong><ul>${operations
          .filter((op) => op.tag === tag)
          .map((op) => `<li><a href="#${op.anchor}"><code>${escapeHtml(op.label)}</code></a></li>`)
          .join('')}</ul></li>`,
    )
    .join('');
  return layout(
    `${text(info.title)} reference`,
    `<h1>${escapeHtml(text(info.title))} <small>${escapeHtml(text(info.version))}</small></h1>
<p>${escapeHtml(text(info.description))}</p>
${intro}
<nav aria-label="Operations"><ul>${nav}${sections.map((section) => section.nav).join('')}</ul></nav>
${tags
  .map(
    (tag) =>
      `<h2>${escapeHtml(tag)}</h2>${operations
        .filter((op) => op.tag === tag)
        .map((op) => op.html)
        .join('')}`,
  )
  .join('')}
${sections.map((section) => section.html).join('')}
<h2>Schemas</h2>${schemaHtml}`,
  );
}
