import { createSigner, generateSecret } from '@holdfast/webhook-signer';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { webhookReceiver } from '../src/hono';
import { createVerifier } from '../src/index';
import { createReceiver } from '../src/receive';
import { memoryDedupStore, memoryQueue, memoryVersionStore, type WebhookEvent } from '../src/receiver';

const T = 1_700_000_000;
const now = () => T * 1000;
const secret = generateSecret();
const signer = createSigner({ secrets: secret });

function app(options: { types?: readonly string[]; fail?: boolean } = {}) {
  const events: WebhookEvent[] = [];
  let fail = options.fail ?? false;
  const hono = new Hono();
  hono.post(
    '/hooks/:name',
    webhookReceiver({
      secrets: (c) => (c.req.param('name') === 'billing' ? [generateSecretOnce(), secret] : undefined),
      dedup: memoryDedupStore({ now }),
      versions: {
        store: memoryVersionStore(),
        of: (event) => {
          const p = event.payload as { data?: { id?: string; sequence?: number } };
          return p.data?.id && p.data.sequence !== undefined
            ? { resource: p.data.id, version: p.data.sequence }
            : undefined;
        },
      },
      ...(options.types ? { types: options.types } : {}),
      now,
      maxBytes: 4096,
      requestId: () => 'req_1',
      onEvent: (event) => {
        if (fail) throw new Error('queue down');
        events.push(event);
      },
    }),
  );
  hono.onError((_error, c) => c.json({ code: 'internal_error' }, 500));
  return { hono, events, heal: () => (fail = false) };
}
const other = generateSecret();
const generateSecretOnce = () => other;

function post(
  hono: Hono,
  body: string | Uint8Array,
  init: { id?: string; ts?: number; name?: string; sig?: string } = {},
) {
  const id = init.id ?? 'evt_1';
  const ts = init.ts ?? T;
  const headers = signer.headers({ id, timestamp: ts, body });
  return hono.request(`/hooks/${init.name ?? 'billing'}`, {
    method: 'POST',
    headers: {
      ...headers,
      ...(init.sig ? { 'webhook-signature': init.sig } : {}),
      'content-type': 'application/json',
    },
    body: typeof body === 'string' ? body : body.slice(),
  });
}
const event = (type: string, id: string, sequence: number) =>
  JSON.stringify({ type, data: { id, sequence } });

describe('webhookReceiver (Hono)', () => {
  it('accepts with 204, hands off once, and acknowledges a duplicate with 200 without a second hand-off', async () => {
    const { hono, events } = app();
    const body = event('subscription.updated', 'sub_1', 1);
    expect((await post(hono, body)).status).toBe(204);
    const again = await post(hono, body, { ts: T + 60 });
    expect(again.status).toBe(200);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      id: 'evt_1',
      type: 'subscription.updated',
      payload: { data: { id: 'sub_1' } },
    });
  });

  it('answers problem+json: 401 bad signature, 400 timestamp, 404 unknown receiver, 413 too large', async () => {
    const { hono, events } = app();
    const bad = await post(hono, '{}', { sig: `v1,${btoa('x'.repeat(32))}` });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('content-type')).toBe('application/problem+json');
    expect(await bad.json()).toEqual({
      type: '/problems/webhook_signature_invalid',
      title: 'Webhook signature invalid',
      status: 401,
      detail: 'No signature matches a configured secret.',
      instance: '/hooks/billing',
      code: 'webhook_signature_invalid',
      requestId: 'req_1',
    });
    const old = await post(hono, '{}', { ts: T - 301 });
    expect(old.status).toBe(400);
    expect(await old.json()).toMatchObject({ code: 'webhook_timestamp_out_of_window' });
    const missing = await hono.request('/hooks/billing', { method: 'POST', body: '{}' });
    expect(missing.status).toBe(400);
    expect((await post(hono, '{}', { name: 'nobody' })).status).toBe(404);
    expect((await post(hono, `"${'x'.repeat(5000)}"`)).status).toBe(413);
    expect(events).toHaveLength(0);
  });

  it('signed non-JSON gives 400 invalid_json, not a 500', async () => {
    const { hono } = app();
    const res = await post(hono, 'not json');
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'invalid_json' });
    const notUtf8 = await post(hono, new Uint8Array([0x22, 0xff, 0x22]));
    expect(notUtf8.status).toBe(400);
  });

  it('acknowledges unknown event types with 200 and does not hand them off', async () => {
    const { hono, events } = app({ types: ['subscription.created', 'subscription.updated'] });
    expect((await post(hono, event('invoice.paid', 'inv_1', 1), { id: 'evt_u' })).status).toBe(200);
    expect((await post(hono, '[1,2]', { id: 'evt_a' })).status).toBe(200);
    expect((await post(hono, event('subscription.created', 'sub_1', 1), { id: 'evt_k' })).status).toBe(204);
    expect(events.map((e) => e.id)).toEqual(['evt_k']);
  });

  it('discards stale events by sequence per resource (200, no hand-off)', async () => {
    const { hono, events } = app();
    expect((await post(hono, event('subscription.updated', 'sub_1', 5), { id: 'e5' })).status).toBe(204);
    expect((await post(hono, event('subscription.updated', 'sub_1', 4), { id: 'e4' })).status).toBe(200);
    expect((await post(hono, event('subscription.updated', 'sub_2', 1), { id: 'e1' })).status).toBe(204);
    expect(events.map((e) => e.id)).toEqual(['e5', 'e1']);
  });

  it('a failed hand-off answers 5xx and releases the id, so the retry is processed', async () => {
    const { hono, events, heal } = app({ fail: true });
    expect((await post(hono, event('subscription.updated', 'sub_9', 1), { id: 'evt_f' })).status).toBe(500);
    heal();
    expect((await post(hono, event('subscription.updated', 'sub_9', 2), { id: 'evt_f' })).status).toBe(204);
    expect(events.map((e) => e.id)).toEqual(['evt_f']);
  });

  it('verifies with any of the receiver secrets (rotation)', async () => {
    const { hono } = app();
    const body = event('subscription.updated', 'sub_r', 1);
    const headers = createSigner({ secrets: other }).headers({ id: 'evt_rot', timestamp: T, body });
    const res = await hono.request('/hooks/billing', { method: 'POST', headers: { ...headers }, body });
    expect(res.status).toBe(204);
  });
});

describe('createReceiver with memoryQueue', () => {
  it('acknowledges before processing, then processes in the background', async () => {
    const processed: string[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const queue = memoryQueue(async (e) => {
      await gate;
      processed.push(e.id);
    });
    const receiver = createReceiver({ dedup: memoryDedupStore(), onEvent: (e) => queue.enqueue(e) });
    const verifier = createVerifier({ secrets: secret, now });
    const body = event('subscription.created', 'sub_q', 1);
    const verified = verifier.verify({ ...signer.headers({ id: 'evt_q', timestamp: T, body }) }, body);
    if (!verified.ok) throw new Error(verified.detail);
    expect(await receiver.handle(verified)).toMatchObject({ status: 204, outcome: 'accepted' });
    expect(processed).toEqual([]);
    expect(queue.size).toBe(1);
    release();
    await queue.idle();
    expect(processed).toEqual(['evt_q']);
  });

  it('refuses a retention not beyond the tolerance', () => {
    expect(() => createReceiver({ onEvent: () => {}, retentionSeconds: 300 })).toThrow(RangeError);
  });
});
