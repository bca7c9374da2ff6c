import { createSigner, generateSecret } from '@holdfast/webhook-signer';
import fc from 'fast-check';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { type WebhookReceiverOptions, webhookReceiver } from '../src/hono';
import { memoryDedupStore, type WebhookEvent } from '../src/receiver';

// The receiver's hooks and limits (the options a server needs to mount it as is): the webhook-id
// cap, the nesting cap, the streamed body cap, the hooks before and after verification, and the
// app's own renderings of refusals and acknowledgements.

const T = 1_700_000_000;
const now = () => T * 1000;
const secret = generateSecret();
const signer = createSigner({ secrets: secret });

function mount(options: Partial<WebhookReceiverOptions> = {}) {
  const events: WebhookEvent[] = [];
  const hono = new Hono();
  hono.post(
    '/hooks/:name',
    webhookReceiver({
      secrets: () => [secret],
      now,
      maxBytes: 4096,
      onEvent: (event) => {
        events.push(event);
      },
      ...options,
    }),
  );
  return { hono, events };
}

function post(hono: Hono, body: string, id = 'evt_1', signature?: string) {
  const headers = signer.headers({ id, timestamp: T, body });
  return hono.request('/hooks/billing', {
    method: 'POST',
    headers: { ...headers, ...(signature ? { 'webhook-signature': signature } : {}) },
    body,
  });
}

describe('webhookReceiver limits', () => {
  it('refuses a webhook-id over maxIdLength (default 255) with 400 validation_failed naming the header', async () => {
    const { hono, events } = mount();
    const long = await post(hono, '{}', 'x'.repeat(256));
    expect(long.status).toBe(400);
    const problem = (await long.json()) as { code: string; errors: { field: string }[] };
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors[0]?.field).toBe('webhook-id');
    expect((await post(hono, '{}', 'x'.repeat(255))).status).toBe(204);
    expect(events).toHaveLength(1);
    const strict = mount({ maxIdLength: 10 });
    expect((await post(strict.hono, '{}', 'x'.repeat(11))).status).toBe(400);
  });

  it('refuses a payload nested deeper than maxDepth with 400 validation_failed, and frees the id', async () => {
    const dedup = memoryDedupStore({ now });
    const { hono, events } = mount({ dedup, maxBytes: 1024 * 1024 });
    const deep = `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const refused = await post(hono, deep);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { code: string }).code).toBe('validation_failed');
    expect(events).toHaveLength(0);
    // Never claimed, so the sender's corrected delivery with the same id is accepted.
    expect((await post(hono, `{"a":${'['.repeat(60)}${']'.repeat(60)}}`)).status).toBe(204);
    const shallow = mount({ maxDepth: 2 });
    expect((await post(shallow.hono, '{"a":{"b":1}}')).status).toBe(204);
    expect((await post(shallow.hono, '{"a":{"b":[]}}')).status).toBe(400);
  });

  it('cuts off a streamed body without content-length at maxBytes with 413', async () => {
    const { hono, events } = mount({ maxBytes: 1000 });
    const chunks = Array.from({ length: 10 }, () => new TextEncoder().encode('x'.repeat(500)));
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const chunk = chunks[pulled++];
        if (chunk) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const headers = signer.headers({ id: 'evt_big', timestamp: T, body: 'irrelevant' });
    // `duplex` is required by fetch for a streamed body; the DOM typings do not know it yet.
    const init: RequestInit & { duplex: 'half' } = {
      method: 'POST',
      headers: { ...headers },
      body: stream,
      duplex: 'half',
    };
    const response = await hono.request('/hooks/billing', init);
    expect(response.status).toBe(413);
    // Reading stopped at the cap instead of buffering all ten chunks.
    expect(pulled).toBeLessThan(10);
    expect(events).toHaveLength(0);
  });

  it('takes event types as a test as well as a list', async () => {
    const { hono, events } = mount({ types: (type) => type.startsWith('order.') });
    expect((await post(hono, '{"type":"order.updated"}', 'evt_a')).status).toBe(204);
    expect((await post(hono, '{"type":"rocket.launched"}', 'evt_b')).status).toBe(200);
    expect(events.map((event) => event.id)).toEqual(['evt_a']);
  });
});

describe('webhookReceiver hooks', () => {
  it('calls beforeVerify before reading, onInvalid on a bad signature, onVerified only once verified', async () => {
    const calls: string[] = [];
    const { hono } = mount({
      beforeVerify: () => {
        calls.push('before');
      },
      onInvalid: (_c, failure) => {
        calls.push(`invalid:${failure.code}`);
      },
      onVerified: () => {
        calls.push('verified');
      },
    });
    expect((await post(hono, '{}', 'evt_1', 'v1,AAAA')).status).toBe(401);
    expect(calls).toEqual(['before', 'invalid:webhook_signature_invalid']);
    calls.length = 0;
    expect((await post(hono, '{}', 'evt_2')).status).toBe(204);
    expect(calls).toEqual(['before', 'verified']);
  });

  it('answers with the Response a hook returns, handing nothing off', async () => {
    const refused = mount({ beforeVerify: (c) => c.json({ limited: 'address' }, 429) });
    const first = await post(refused.hono, '{}');
    expect(first.status).toBe(429);
    expect(await first.json()).toEqual({ limited: 'address' });
    expect(refused.events).toHaveLength(0);
    const limited = mount({ onVerified: (c) => c.json({ limited: 'receiver' }, 429) });
    expect((await post(limited.hono, '{}')).status).toBe(429);
    expect(limited.events).toHaveLength(0);
  });

  it('renders refusals and acknowledgements the app way when given problem and acknowledge', async () => {
    const { hono } = mount({
      dedup: memoryDedupStore({ now }),
      problem: (c, refusal) => c.json({ mine: refusal.code, title: refusal.title }, 418),
      acknowledge: (c, ack) => c.json({ outcome: ack.outcome, id: ack.id }, 200),
    });
    const bad = await post(hono, '{}', 'evt_1', 'v1,AAAA');
    expect(bad.status).toBe(418);
    expect(await bad.json()).toEqual({
      mine: 'webhook_signature_invalid',
      title: 'Webhook signature invalid',
    });
    expect(await (await post(hono, '{}')).json()).toEqual({ outcome: 'accepted', id: 'evt_1' });
    expect(await (await post(hono, '{}')).json()).toEqual({ outcome: 'duplicate', id: 'evt_1' });
  });

  it('reports what a self-deduplicating hand-off says: duplicate and receipt', async () => {
    const seen = new Map<string, string>();
    const { hono } = mount({
      onEvent: (event) => {
        const existing = seen.get(event.id);
        if (existing) return { duplicate: true, receipt: existing };
        seen.set(event.id, `inb_${seen.size + 1}`);
        return { duplicate: false, receipt: `inb_${seen.size}` };
      },
      acknowledge: (c, ack) => c.json({ outcome: ack.outcome, receipt: ack.receipt }, 200),
    });
    expect(await (await post(hono, '{}')).json()).toEqual({ outcome: 'accepted', receipt: 'inb_1' });
    expect(await (await post(hono, '{}')).json()).toEqual({ outcome: 'duplicate', receipt: 'inb_1' });
  });

  it('never answers 5xx to a correctly signed body, whatever its bytes', async () => {
    const { hono } = mount({ maxBytes: 1024 * 1024 });
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 200 }), fc.nat(), async (bytes, n) => {
        const body = new TextDecoder().decode(bytes);
        const response = await post(hono, body, `evt_${n}`);
        expect([200, 204, 400]).toContain(response.status);
      }),
      { numRuns: 100 },
    );
  });
});
