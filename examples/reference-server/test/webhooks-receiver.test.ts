import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT, api, eventually, KEYS, startTestServer, type TestServer } from './webhooks-harness';

// The receiver at /hooks/{name} over real HTTP: verification of the raw body (400, 401),
// unknown receivers (404), PostgreSQL deduplication by Webhook-Id, the inbox processed in the
// background (processed, stale by sequence, unknown types ignored), and GET /v1/inbound-events.

const RECEIVER_SECRET = `whsec_${Buffer.from('holdfast-webhooks-test-secret-32').toString('base64')}`;
const ROTATED_SECRET = `whsec_${Buffer.from('holdfast-webhooks-rotated-secret').toString('base64')}`;

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({
    HOLDFAST_RECEIVER_SECRETS: JSON.stringify({
      billing: { account: ACCOUNT, secrets: [RECEIVER_SECRET, ROTATED_SECRET] },
    }),
  });
});

afterAll(async () => {
  await server?.close();
});

const call = (method: string, path: string, options: Parameters<typeof api>[3] = {}) =>
  api(server.url, method, path, options);

/** Signs like a Standard Webhooks sender, written independently of the packages. */
function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

describe('the /hooks/{name} receiver', () => {
  const body = (id: string, sequence: number, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      id,
      type: 'subscription.updated',
      createdAt: new Date().toISOString(),
      sequence,
      data: { object: { id: 'sub_remote1', updatedAt: new Date().toISOString(), ...extra } },
    });

  async function post(
    name: string,
    id: string,
    payload: string,
    options: { secret?: string; at?: number } = {},
  ) {
    const at = options.at ?? Math.floor(Date.now() / 1000);
    return fetch(new URL(`/hooks/${name}`, server.url), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(at),
        'webhook-signature': sign(options.secret ?? RECEIVER_SECRET, id, at, payload),
      },
      body: payload,
    });
  }

  it('verifies, deduplicates, queues and processes; stale and unknown events are acknowledged', async () => {
    const first = await post('billing', 'evt_in_1', body('evt_in_1', 5));
    expect(first.status).toBe(200);
    expect(first.headers.get('request-id')).toMatch(/^req_/);
    const ack = (await first.json()) as { received: boolean; duplicate: boolean };
    expect(ack).toMatchObject({ received: true, duplicate: false });
    const again = await post('billing', 'evt_in_1', body('evt_in_1', 5));
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ duplicate: true });
    expect((await post('billing', 'evt_in_0', body('evt_in_0', 4))).status).toBe(200);
    const unknownType = JSON.stringify({ id: 'evt_in_2', type: 'rocket.launched', data: { object: {} } });
    expect((await post('billing', 'evt_in_2', unknownType)).status).toBe(200);

    const statuses = await eventually(async () => {
      const list = await call('GET', '/v1/inbound-events?limit=100');
      const byId = new Map<string, string>(
        list.body.data.map((e: { webhookId: string; status: string }) => [e.webhookId, e.status]),
      );
      return ['evt_in_1', 'evt_in_0', 'evt_in_2'].every((id) => byId.get(id) !== 'pending' && byId.has(id))
        ? byId
        : undefined;
    });
    expect(statuses.get('evt_in_1')).toBe('processed');
    expect(statuses.get('evt_in_0')).toBe('stale');
    expect(statuses.get('evt_in_2')).toBe('ignored');
    const list = await call('GET', '/v1/inbound-events?limit=100');
    expect(list.body.data.filter((e: { webhookId: string }) => e.webhookId === 'evt_in_1')).toHaveLength(1);
    const others = await call('GET', '/v1/inbound-events', { key: KEYS.other });
    expect(others.body.data).toEqual([]);
  });

  it('accepts any configured secret, discards stale events by updatedAt, filters and pages the inbox', async () => {
    const at = (iso: string, id: string) =>
      JSON.stringify({ id, type: 'order.updated', data: { object: { id: 'ord_remote1', updatedAt: iso } } });
    expect(
      (
        await post('billing', 'evt_up_2', at('2026-11-22T10:00:02.000Z', 'evt_up_2'), {
          secret: ROTATED_SECRET,
        })
      ).status,
    ).toBe(200);
    await eventually(async () => {
      const list = await call('GET', '/v1/inbound-events?status=pending');
      return list.body.data.length === 0 ? true : undefined;
    });
    expect((await post('billing', 'evt_up_1', at('2026-11-22T10:00:01.000Z', 'evt_up_1'))).status).toBe(200);
    const stale = await eventually(async () => {
      const list = await call('GET', '/v1/inbound-events?status=stale&limit=100');
      return list.body.data.find((e: { webhookId: string }) => e.webhookId === 'evt_up_1');
    });
    expect(stale.resource).toBe('ord_remote1');

    const first = await call('GET', '/v1/inbound-events?limit=2&include=total');
    expect(first.status).toBe(200);
    expect(first.body.pageInfo.totalCount).toBeGreaterThanOrEqual(5);
    expect(first.body.pageInfo.hasMore).toBe(true);
    const second = await call('GET', `/v1/inbound-events?limit=2&cursor=${first.body.pageInfo.nextCursor}`);
    expect(second.status).toBe(200);
    const ids = [...first.body.data, ...second.body.data].map((e: { id: string }) => e.id);
    expect(new Set(ids).size).toBe(4);
    const wrongFilter = await call(
      'GET',
      `/v1/inbound-events?status=stale&cursor=${first.body.pageInfo.nextCursor}`,
    );
    expect(wrongFilter.status).toBe(400);
    expect(wrongFilter.body.code).toBe('invalid_cursor');
    const otherAccount = await call('GET', `/v1/inbound-events?cursor=${first.body.pageInfo.nextCursor}`, {
      key: KEYS.other,
    });
    expect(otherAccount.body.code).toBe('invalid_cursor');
    const ascending = await call('GET', '/v1/inbound-events?sort=createdAt&limit=1');
    expect(ascending.body.data[0].webhookId).toBe('evt_in_1');
    expect((await call('GET', '/v1/inbound-events?sort=type')).body.code).toBe('invalid_sort');
    expect((await call('GET', '/v1/inbound-events', { key: KEYS.none })).status).toBe(403);
    expect((await call('GET', '/v1/inbound-events', { key: null })).status).toBe(401);
  });

  it('answers 400 out of window, 401 bad signature, 404 unknown receiver, all as problem+json', async () => {
    const payload = body('evt_in_bad', 1);
    const old = await post('billing', 'evt_in_bad', payload, { at: Math.floor(Date.now() / 1000) - 301 });
    expect(old.status).toBe(400);
    expect(((await old.json()) as { code: string }).code).toBe('webhook_timestamp_out_of_window');
    // Well past the 300 s tolerance: a clock tick between here and the check must not bring it in.
    const future = await post('billing', 'evt_in_bad', payload, { at: Math.floor(Date.now() / 1000) + 330 });
    expect(future.status).toBe(400);
    await future.body?.cancel();
    const forged = await post('billing', 'evt_in_bad', payload, {
      secret: `whsec_${Buffer.from('another-secret-of-32-bytes-00000').toString('base64')}`,
    });
    expect(forged.status).toBe(401);
    expect(forged.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await forged.json()) as { code: string }).code).toBe('webhook_signature_invalid');
    const unknown = await post('nobody', 'evt_in_bad', payload);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { code: string }).code).toBe('not_found');
    const unsigned = await fetch(new URL('/hooks/billing', server.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: payload,
    });
    expect([400, 401]).toContain(unsigned.status);
    await unsigned.body?.cancel();
    const list = await call('GET', '/v1/inbound-events?limit=100');
    expect(list.body.data.some((e: { webhookId: string }) => e.webhookId === 'evt_in_bad')).toBe(false);
  });

  it('refuses a signed event nested 100,000 deep with 400, storing nothing', async () => {
    const depth = 100_000;
    const deep = `{"id":"evt_in_deep","type":"x","data":{"object":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
    const answer = await post('billing', 'evt_in_deep', deep);
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { code: string }).code).toBe('validation_failed');
    const shallow = `{"id":"evt_in_deep","type":"x","data":{"object":${'['.repeat(60)}${']'.repeat(60)}}}`;
    expect((await post('billing', 'evt_in_deep', shallow)).status).toBe(200);
    const list = await call('GET', '/v1/inbound-events?limit=100');
    expect(list.body.data.filter((e: { webhookId: string }) => e.webhookId === 'evt_in_deep')).toHaveLength(
      1,
    );
  });
});
