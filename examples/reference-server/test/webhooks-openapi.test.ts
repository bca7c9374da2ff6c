import Ajv2020 from 'ajv/dist/2020';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../src/event-types';
import { payloadSchemaName } from '../src/webhooks-openapi';
import { type Answer, call, type Loose, startTestServer, type TestServer } from './api-harness';

// CONTRACT section 10, "Outbound webhooks documented": /openapi.json declares every event type the
// server emits under `webhooks`, with its payload schema and the three webhook-* headers; the
// events the server really emits validate against the schema declared for their type.

let test: TestServer;
let document: Loose;
const api = (method: string, path: string, options?: Parameters<typeof call>[3]): Promise<Answer> =>
  call(test.url, method, path, options);

beforeAll(async () => {
  test = await startTestServer();
  document = (await api('GET', '/openapi.json', { key: null })).body;
});
afterAll(async () => {
  await test?.stop();
});

const RESOURCE: Record<string, string> = { order: 'Order', payment: 'Payment', subscription: 'Subscription' };

describe('/openapi.json webhooks', () => {
  it.each(EVENT_TYPES)('declares %s with its payload schema and the three webhook-* headers', (type) => {
    const post = document.webhooks?.[type]?.post;
    expect(post, type).toBeDefined();
    const schema = post?.requestBody?.content?.['application/json']?.schema;
    expect(schema?.$ref).toBe(`#/components/schemas/${payloadSchemaName(type)}`);
    const payload = document.components?.schemas?.[payloadSchemaName(type)];
    expect(payload?.properties?.type).toMatchObject({ enum: [type] });
    const object = payload?.properties?.data?.properties?.object;
    const family = RESOURCE[type.split('.')[0] ?? ''];
    if (type === 'order.refunded') expect(object?.$ref).toBe('#/components/schemas/RefundedOrder');
    else expect(object?.$ref).toBe(`#/components/schemas/${family}`);
    const parameters = Object.values(post?.parameters ?? {});
    const headers = parameters.filter((p) => String(p?.in) === 'header').map((p) => p?.name);
    expect(headers.sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    const signature = JSON.stringify(parameters.find((p) => String(p?.name) === 'webhook-signature'));
    expect(signature).toContain('v1,');
    expect(signature).toContain('v1a,');
  });

  it('declares nothing the server does not emit', () => {
    expect(Object.keys(document.webhooks ?? {}).sort()).toEqual([...EVENT_TYPES].sort());
  });

  it('the events the server emits validate against the schema declared for their type', async () => {
    // Every event type, made through the API.
    const order = async () => {
      const created = await api('POST', '/v1/orders', {
        body: { currency: 'EUR', total: 5000, description: 'x' },
      });
      expect(created.status).toBe(201);
      return String(created.body.id);
    };
    const updated = await order();
    expect((await api('PATCH', `/v1/orders/${updated}`, { body: { status: 'shipped' } })).status).toBe(200);
    const refund = await api('POST', `/v1/orders/${updated}/refunds`, { body: { amount: 100 } });
    expect(refund.status).toBe(201);
    expect((await api('POST', `/v1/orders/${await order()}/cancel`)).status).toBe(200);
    expect((await api('DELETE', `/v1/orders/${await order()}`)).status).toBeLessThan(300);
    for (const last4 of ['4242', '0002']) {
      const card = await api('POST', '/v1/payment-methods', {
        body: { type: 'card', card: { brand: 'visa', last4, expMonth: 12, expYear: 2030 } },
      });
      const pm = String(card.body.id);
      const paid = await api('POST', '/v1/payments', {
        body: { amount: 100, currency: 'EUR', paymentMethod: pm },
        headers: { 'idempotency-key': `webhooks-openapi-${last4}` },
      });
      expect(paid.status).toBe(201);
      if (last4 !== '4242') continue;
      const sub = await api('POST', '/v1/subscriptions', { body: { paymentMethod: pm, plan: 'pro' } });
      expect(sub.status).toBe(201);
      const patched = await api('PATCH', `/v1/subscriptions/${String(sub.body.id)}`, {
        body: { quantity: 2 },
      });
      expect(patched.status).toBe(200);
    }

    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    ajv.addSchema({ $id: 'holdfast', components: document.components });
    const seen = new Set<string>();
    let path = '/v1/events?limit=100';
    for (;;) {
      const page = await api('GET', path);
      expect(page.status).toBe(200);
      for (const event of Object.values(page.body.data ?? {})) {
        const type = String(event?.type);
        seen.add(type);
        const validate = ajv.compile({
          $ref: `holdfast#/components/schemas/${payloadSchemaName(type as never)}`,
        });
        expect(validate(event), `${type}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      }
      const next = page.body.pageInfo?.nextCursor;
      if (typeof next !== 'string') break;
      path = `/v1/events?limit=100&cursor=${encodeURIComponent(next)}`;
    }
    expect([...seen].sort()).toEqual([...EVENT_TYPES].sort());
  });

  it('/docs explains receiving them: types, headers, both schemes, verifying, retries, dead letters, replay', async () => {
    const response = await fetch(`${test.url}/docs`);
    expect(response.status).toBe(200);
    const html = await response.text();
    const section = html.slice(html.indexOf('id="receiving-webhooks"'));
    expect(html).toContain('href="#receiving-webhooks"');
    for (const type of EVENT_TYPES) {
      expect(section).toContain(`<code>${type}</code>`);
      expect(section).toContain(`href="#schema-${payloadSchemaName(type)}"`);
      expect(html).toContain(`id="schema-${payloadSchemaName(type)}"`);
    }
    for (const text of [
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
      'v1,&lt;base64&gt;',
      'v1a,&lt;base64&gt;',
      'whpk_',
      'createVerifier',
      '@holdfast/webhook-verifier',
      '1 minute, 5 minutes, 30 minutes, 2 hours, 6 hours and 24 hours',
      'GET /v1/deliveries?status=dead',
      'POST /v1/deliveries/{id}/replay',
      '24 hours the old key signs too',
    ]) {
      expect(section).toContain(text);
    }
  });
});
