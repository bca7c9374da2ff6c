import { type OpenApiDocument, renderReference } from '@holdfast/problem-details';
import { describe, expect, it } from 'vitest';
import { receivingWebhooksSection } from '../src/index';

const webhooks = {
  'order.created': {
    post: {
      description: 'An order was created. POSTed to every endpoint subscribed to it.',
      requestBody: {
        content: { 'application/json': { schema: { $ref: '#/components/schemas/OrderCreatedEvent' } } },
      },
    },
  },
};

describe('receivingWebhooksSection', () => {
  it('lists each event type with its payload schema, escaped', () => {
    const { nav, html } = receivingWebhooksSection({
      webhooks: { ...webhooks, '<x>': { post: { description: 'A <b> POSTed' } } },
    });
    expect(nav).toContain('href="#receiving-webhooks"');
    expect(html).toContain(
      '<tr><td><code>order.created</code></td><td>An order was created.</td><td><a href="#schema-OrderCreatedEvent"><code>OrderCreatedEvent</code></a></td></tr>',
    );
    expect(html).toContain('<code>&lt;x&gt;</code></td><td>A &lt;b&gt;</td>');
    expect(html).not.toContain('<b>');
  });

  it('documents recovery and source addresses only where the document has their paths', () => {
    const bare = receivingWebhooksSection({ webhooks }).html;
    expect(bare).not.toContain('Recovering from an outage');
    expect(bare).not.toContain('Source addresses (allowlisting)');
    const full: OpenApiDocument = {
      webhooks,
      paths: { '/hooks/webhook-endpoints/{id}/recover': {}, '/webhook-source-addresses': {} },
    };
    const html = receivingWebhooksSection(full, '/hooks').html;
    expect(html).toContain('Recovering from an outage');
    expect(html).toContain('Source addresses (allowlisting)');
    expect(html).toContain('<code>POST /hooks/webhook-endpoints</code>');
    expect(html).not.toContain('/v1/');
  });

  it('is a section of renderReference', () => {
    const document: OpenApiDocument = { info: { title: 'Shop', version: '1' }, paths: {}, webhooks };
    const page = renderReference(document, { sections: [receivingWebhooksSection(document)] });
    expect(page).toContain('<h2 id="receiving-webhooks">Receiving webhooks</h2>');
  });
});
