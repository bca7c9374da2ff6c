import type { JsonObject } from '@holdfast/problem-details/openapi';
import { z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { declareWebhooks, webhookHeadersSchema } from '../src/openapi';

const Order = z.object({ id: z.string() }).meta({ id: 'Order' });
const payload = z
  .object({ type: z.literal('order.created'), data: z.object({ object: Order }) })
  .meta({ id: 'OrderCreatedEvent' });

describe('declareWebhooks', () => {
  it('adds one webhook per event type with the Standard Webhooks headers, and its schemas', () => {
    const document: JsonObject = {
      components: { schemas: { Order: { type: 'object', description: 'kept' } } },
    };
    declareWebhooks(
      document,
      [{ type: 'order.created', name: 'OrderCreatedEvent', description: 'An order was created.', payload }],
      {
        note: ' See /docs.',
      },
    );
    const text = JSON.stringify(document);
    const webhooks = document.webhooks as { [type: string]: { post: JsonObject } };
    const post = webhooks['order.created']?.post;
    expect(post?.operationId).toBe('webhookOrderCreatedEvent');
    expect(post?.description).toBe(
      "An order was created. POSTed to every active endpoint subscribed to order.created or *, signed as the endpoint's signatureScheme says. See /docs.",
    );
    for (const header of ['webhook-id', 'webhook-timestamp', 'webhook-signature'])
      expect(text).toContain(`"name":"${header}"`);
    expect(text).toContain('"OrderCreatedEvent":');
    expect(text).toContain('"description":"kept"'); // an existing component is left as it is
  });

  it('describes headers a receiver can check', () => {
    expect(
      webhookHeadersSchema.safeParse({
        'webhook-id': 'evt_1',
        'webhook-timestamp': '1764028800',
        'webhook-signature': 'v1,x',
      }).success,
    ).toBe(true);
    expect(
      webhookHeadersSchema.safeParse({
        'webhook-id': 'evt_1',
        'webhook-timestamp': 'soon',
        'webhook-signature': 'v1,x',
      }).success,
    ).toBe(false);
  });
});
