import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeHtml, HTML_PAGE_CSP, htmlPage, type OpenApiDocument, renderReference } from '../src/index';

const document: OpenApiDocument = {
  openapi: '3.1.0',
  info: { title: 'Shop API', version: '1.2.0', description: 'Orders & refunds.' },
  paths: {
    '/v1/orders/{id}': {
      get: {
        tags: ['Orders'],
        summary: 'Get an order',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          200: {
            description: 'The order.',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } },
          },
          404: { description: 'No such order.' },
        },
      },
    },
    '/healthz': {
      get: {
        tags: ['Operations'],
        summary: 'Liveness',
        security: [],
        responses: { 204: { description: 'Up.' } },
      },
    },
  },
  components: { schemas: { Order: { type: 'object', properties: { id: { type: 'string' } } } } },
};

describe('renderReference()', () => {
  it('lists every operation by tag with its parameters, responses, credentials and schema links', () => {
    const html = renderReference(document);
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('<title>Shop API reference</title>');
    expect(html).toContain('<h2>Orders</h2>');
    expect(html).toContain('<h2>Operations</h2>');
    expect(html).toContain('<code>/v1/orders/{id}</code>');
    expect(html).toContain('<a href="#schema-Order"><code>Order</code></a>');
    expect(html).toContain('<section id="schema-Order">');
    expect(html).toContain('Orders &amp; refunds.');
    // /healthz declares `security: []`: no credentials; the order route inherits them.
    expect(html).toMatch(/Liveness<\/strong> · no API key/);
    expect(html).toMatch(/Get an order<\/strong> · requires <code>Authorization: Bearer<\/code>/);
    expect(html.indexOf('<h2>Orders</h2>')).toBeLessThan(html.indexOf('<h2>Schemas</h2>'));
  });

  it('places the intro, the service’s own sections and the layout it is given', () => {
    const html = renderReference(document, {
      intro: '<p id="intro">See openapi.json</p>',
      sections: [
        { nav: '<li><a href="#receiving">Receiving</a></li>', html: '<h2 id="receiving">Receiving</h2>' },
      ],
      layout: (title, body) => `<x-page title="${escapeHtml(title)}">${body}</x-page>`,
    });
    expect(html.startsWith('<x-page title="Shop API reference">')).toBe(true);
    expect(html.indexOf('<p id="intro">')).toBeLessThan(html.indexOf('<nav'));
    expect(html).toContain('<li><a href="#receiving">Receiving</a></li></ul></nav>');
    expect(html.indexOf('<h2 id="receiving">')).toBeGreaterThan(html.indexOf('<h2>Orders</h2>'));
    expect(html.indexOf('<h2 id="receiving">')).toBeLessThan(html.indexOf('<h2>Schemas</h2>'));
  });

  it('escapes every text the document carries: it adds no tag, whatever it holds', () => {
    const build = (title: string, summary: string, name: string): OpenApiDocument => ({
      info: { title, version: '1', description: summary },
      paths: {
        [`/x/${name}`]: {
          post: {
            tags: [name],
            summary,
            description: summary,
            parameters: [{ name, in: 'query', description: summary }],
            responses: { [`2${name}`]: { description: summary } },
          },
        },
      },
      components: { schemas: { [`S${name}`]: { description: summary } } },
    });
    // The same document with every non-empty text replaced by a harmless one has exactly as
    // many `<` (tags): so none came from the text.
    const plain = (text: string) => (text === '' ? '' : 'a');
    const tags = (html: string) => html.split('<').length;
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), (title, summary, name) => {
        const hostile = renderReference(build(title, summary, name));
        const harmless = renderReference(build(plain(title), plain(summary), plain(name)));
        expect(tags(hostile)).toBe(tags(harmless));
      }),
      { examples: [['<script>', '<img src=x onerror=alert(1)>', '"><b>']] },
    );
  });
});

describe('htmlPage()', () => {
  it('is one self-contained page: escaped title, no external resource, no script', () => {
    const html = htmlPage('<Shop>', '<h1>Hi</h1>');
    expect(html).toContain('<title>&lt;Shop&gt;</title>');
    expect(html).toContain('<main><h1>Hi</h1></main>');
    expect(html).not.toMatch(/<script|<link|src=|@import|url\(/);
  });

  it('HTML_PAGE_CSP allows exactly the inline stylesheet of htmlPage, and no framing', () => {
    const html = renderReference(document);
    const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1] ?? '');
    expect(styles).toHaveLength(1);
    const hash = createHash('sha256')
      .update(styles[0] ?? '')
      .digest('base64');
    const directives = new Map(
      HTML_PAGE_CSP.split(';').map((d) => {
        const [name = '', ...values] = d.trim().split(/\s+/);
        return [name, values] as const;
      }),
    );
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('style-src')).toEqual([`'sha256-${hash}'`]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    // Nothing else is inline: no style attributes or scripts the policy would block.
    expect(html).not.toMatch(/ style=|<script/);
  });
});
