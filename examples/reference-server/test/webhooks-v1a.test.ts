import { createVerifier } from '@holdfast/webhook-verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  eventually,
  type Receiver,
  startReceiver,
  startTestServer,
  type TestServer,
} from './webhooks-harness';

// CONTRACT section 10, "Standard Webhooks v1a": an endpoint may choose signatureScheme "v1a"; its
// deliveries carry v1a,<ed25519> entries that verify with the publicKey every response shows, and
// a rotation keeps the old key signing for 24 h, as with v1. Over real HTTP, to a real receiver.

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const call = (method: string, path: string, body?: unknown) =>
  api(server.url, method, path, body === undefined ? {} : { body });

async function deliveryOf(orderId: string) {
  return eventually(
    async () => receiver.received.find((r) => r.body.includes(orderId)),
    20_000,
    `the delivery of ${orderId}`,
  );
}

async function newOrder(): Promise<string> {
  const order = await call('POST', '/v1/orders', { currency: 'EUR', total: 1200, description: 'v1a' });
  expect(order.status).toBe(201);
  return String(order.body.id);
}

describe('v1a webhook endpoints', () => {
  it('show their scheme and public key in every response, and sign deliveries that verify with it', async () => {
    const created = await call('POST', '/v1/webhook-endpoints', {
      url: receiver.url,
      eventTypes: ['order.created'],
      signatureScheme: 'v1a',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ signatureScheme: 'v1a' });
    // The whsk_ signing key never leaves the server: receivers need only the public key.
    expect(created.body.secret).toBeUndefined();
    expect(JSON.stringify(created.body)).not.toContain('whsk_');
    expect(created.body.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    const id = String(created.body.id);
    const publicKey = String(created.body.publicKey);

    const got = await call('GET', `/v1/webhook-endpoints/${id}`);
    expect(got.body).toMatchObject({ signatureScheme: 'v1a', publicKey });
    expect(got.body.secret).toBeUndefined();
    const listed = await call('GET', '/v1/webhook-endpoints');
    expect(listed.body.data.find((e: { id: string }) => e.id === id)).toMatchObject({ publicKey });
    const patched = await call('PATCH', `/v1/webhook-endpoints/${id}`, { description: 'ed25519' });
    expect(patched.body).toMatchObject({ signatureScheme: 'v1a', publicKey, description: 'ed25519' });

    const orderId = await newOrder();
    const delivery = await deliveryOf(orderId);
    const signature = String(delivery.headers['webhook-signature']);
    expect(signature).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    const headers = {
      'webhook-id': String(delivery.headers['webhook-id']),
      'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
      'webhook-signature': signature,
    };
    expect((await createVerifier({ secrets: publicKey }).verifyAsync(headers, delivery.body)).ok).toBe(true);
    const other = await call('POST', '/v1/webhook-endpoints', {
      url: receiver.url,
      eventTypes: ['order.updated'],
    });
    expect(other.body).toMatchObject({ signatureScheme: 'v1', publicKey: null });
    expect(
      (await createVerifier({ secrets: String(other.body.secret) }).verifyAsync(headers, delivery.body)).ok,
    ).toBe(false);

    // Rotation: a new key pair; for 24 h the old key signs too, one v1a entry each.
    const rotated = await call('POST', `/v1/webhook-endpoints/${id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toBeUndefined();
    expect(rotated.body.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(rotated.body.publicKey).not.toBe(publicKey);
    expect((await call('GET', `/v1/webhook-endpoints/${id}`)).body.publicKey).toBe(rotated.body.publicKey);
    const next = await deliveryOf(await newOrder());
    const both = {
      'webhook-id': String(next.headers['webhook-id']),
      'webhook-timestamp': String(next.headers['webhook-timestamp']),
      'webhook-signature': String(next.headers['webhook-signature']),
    };
    expect(both['webhook-signature']).toMatch(/^v1a,\S+ v1a,\S+$/);
    for (const key of [publicKey, String(rotated.body.publicKey)]) {
      expect((await createVerifier({ secrets: key }).verifyAsync(both, next.body)).ok).toBe(true);
    }
  });

  it('rotating a v1 endpoint keeps it v1; the scheme is fixed at creation and checked', async () => {
    const v1 = await call('POST', '/v1/webhook-endpoints', { url: receiver.url, signatureScheme: 'v1' });
    expect(v1.body).toMatchObject({ signatureScheme: 'v1', publicKey: null });
    const rotated = await call('POST', `/v1/webhook-endpoints/${String(v1.body.id)}/rotate-secret`);
    expect(rotated.body).toMatchObject({ signatureScheme: 'v1', publicKey: null });
    expect(rotated.body.secret).toMatch(/^whsec_/);
    const patch = await call('PATCH', `/v1/webhook-endpoints/${String(v1.body.id)}`, {
      signatureScheme: 'v1a',
    });
    expect(patch.status).toBe(400);
    expect(patch.body.code).toBe('unknown_field');
    const bad = await call('POST', '/v1/webhook-endpoints', { url: receiver.url, signatureScheme: 'v2' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
  });
});
