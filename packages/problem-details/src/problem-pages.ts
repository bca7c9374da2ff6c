import { Hono } from 'hono';
import { html, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import { DEFAULT_TYPE_BASE, type ProblemDefinitions, problem } from './catalogue';
import { answerFixed, type FixedDocument, fixedDocument } from './fixed-document';

/** Options of {@link problemPages}. */
export interface ProblemPagesOptions {
  /** Every code a response may carry, with its status and title. */
  readonly definitions: ProblemDefinitions;
  /**
   * What each code means and what a client should do; `backticks` become `<code>`. A code
   * without advice has no page.
   */
  readonly advice: Readonly<Record<string, string>>;
  /** The type URI base the problems carry. Default `DEFAULT_TYPE_BASE`. */
  readonly typeBase?: string;
  /** Wraps a page's body (already escaped HTML) in a whole document. Default: a bare page. */
  readonly layout?: (title: string, body: string) => string;
  /** `Cache-Control` of every page. @defaultValue `'public, max-age=3600'` */
  readonly cacheControl?: string;
}

const bare = (title: string, body: string) =>
  String(
    html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${raw(body)}</body></html>`,
  );

const withCode = (text: string): HtmlEscapedString | Promise<HtmlEscapedString> =>
  raw(String(html`${text}`).replace(/`([^`]+)`/g, '<code>$1</code>'));

/**
 * `/` (a table of every code) and `/{code}` (its status, title, advice and type URI) as a Hono
 * app to mount where the problems' `type` URIs point, so each `type` is a page a developer can
 * open (RFC 9457 section 3.1.1). An unknown code is 404 `not_found`. Each page is rendered once,
 * on its first request, and served from then on with a strong ETag (the SHA-256 of its bytes):
 * a request whose `If-None-Match` names it is 304, so a flood of page requests costs no rendering.
 *
 * @example
 * ```ts
 * app.route('/problems', problemPages({ definitions: holdfastProblems.definitions, advice: { not_found: 'Check the id.' } }));
 * ```
 */
export function problemPages(options: ProblemPagesOptions): Hono {
  const {
    definitions,
    advice,
    typeBase = DEFAULT_TYPE_BASE,
    layout = bare,
    cacheControl = 'public, max-age=3600',
  } = options;
  const codes = Object.keys(definitions).filter((code) => Object.hasOwn(advice, code));
  // Rendered once per page (the definitions never change): the promise, so concurrent first
  // requests render it once too.
  const rendered = new Map<string, Promise<FixedDocument>>();
  const once = (key: string, render: () => string): Promise<FixedDocument> => {
    let page = rendered.get(key);
    if (!page) {
      page = fixedDocument(render());
      rendered.set(key, page);
    }
    return page;
  };
  const htmlType = 'text/html; charset=UTF-8';
  const app = new Hono();
  app.get('/', async (c) => {
    const page = await once('', () =>
      layout(
        'Problem types',
        String(html`<h1>Problem types</h1><p>Every error is <code>application/problem+json</code> (RFC 9457) with a stable <code>code</code>. Branch on the code, never on the text.</p>
<table><thead><tr><th>code</th><th>status</th><th>title</th></tr></thead><tbody>${codes.map(
          (code) =>
            html`<tr><td><a href="/problems/${code}"><code>${code}</code></a></td><td>${definitions[code]?.status}</td><td>${definitions[code]?.title ?? ''}</td></tr>`,
        )}</tbody></table>`),
      ),
    );
    return answerFixed(c, page, htmlType, cacheControl);
  });
  app.get('/:code', async (c) => {
    const code = c.req.param('code');
    const definition = Object.hasOwn(advice, code) ? definitions[code] : undefined;
    if (!definition) throw problem('not_found', { detail: `There is no problem type "${code}".` });
    const page = await once(code, () =>
      layout(
        code,
        String(html`<p><a href="/problems">All problem types</a></p><h1><code>${code}</code></h1>
<p><strong>${definition.status}</strong> ${definition.title}</p>
<p>${withCode(advice[code] ?? '')}</p>
<p>Type URI: <code>${typeBase + code}</code></p>`),
      ),
    );
    return answerFixed(c, page, htmlType, cacheControl);
  });
  return app;
}
