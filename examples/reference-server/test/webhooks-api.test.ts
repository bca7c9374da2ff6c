import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../src/event-types';
import {
  api,
  eventually,
  KEYS,
  type Receiver,
  startReceiver,
  startTestServer,
  type TestServer,
} from './webhooks-harness';

// The webhook management API over real HTTP: /v1/webhook-endpoints, /events, /deliveries,
// /notifications, /inbound-events: every status and error code they can produce.

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startTestServer({ HOLDFAST_RETRY_SCHEDULE: '1s,1s' });
});

afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const call = (method: string, path: string, options: Parameters<typeof api>[3] = {}) =>
  api(server.url, method, path, options);

function expectProblem(response: Awaited<ReturnType<typeof api>>, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.headers.get('request-id')).toMatch(/^req_/);
  expect(response.body.code).toBe(code);
  expect(response.body.status).toBe(status);
  expect(response.body.requestId).toBe(response.headers.get('request-id'));
}

async function createEndpoint(body: Record<string, unknown> = {}, key: string = KEYS.all) {
  const response = await call('POST', '/v1/webhook-endpoints', { key, body: { url: receiver.url, ...body } });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}

describe('webhook endpoints', () => {
  it('creates an endpoint: 201, Location, the secret once', async () => {
    const response = await call('POST', '/v1/webhook-endpoints', {
      body: { url: receiver.url, description: 'orders feed', eventTypes: ['order.created'] },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`/v1/webhook-endpoints/${response.body.id}`);
    expect(response.body).toMatchObject({
      url: receiver.url,
      description: 'orders feed',
      eventTypes: ['order.created'],
      status: 'active',
    });
    expect(response.body.id).toMatch(/^we_[A-Za-z0-9_-]{16,}$/);
    expect(response.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(response.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(response.body.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);

    const fetched = await call('GET', `/v1/webhook-endpoints/${response.body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.secret).toBeUndefined();
    expect(fetched.body.id).toBe(response.body.id);
    const listed = await call('GET', '/v1/webhook-endpoints');
    expect(listed.status).toBe(200);
    for (const endpoint of listed.body.data) expect(endpoint.secret).toBeUndefined();
  });

  it('validates the body: unknown fields, bad values, bad JSON, media type, size', async () => {
    const unknown = await call('POST', '/v1/webhook-endpoints', {
      body: { url: receiver.url, colour: 'red' },
    });
    expectProblem(unknown, 400, 'unknown_field');
    expect(unknown.body.errors).toContainEqual(
      expect.objectContaining({ field: 'colour', code: 'unknown_field' }),
    );

    expectProblem(
      await call('POST', '/v1/webhook-endpoints', { body: { eventTypes: ['x'] } }),
      400,
      'validation_failed',
    );
    expectProblem(
      await call('POST', '/v1/webhook-endpoints', { body: { url: 'not a url' } }),
      400,
      'validation_failed',
    );
    expectProblem(await call('POST', '/v1/webhook-endpoints', { rawBody: '{"url":' }), 400, 'invalid_json');
    expectProblem(
      await call('POST', '/v1/webhook-endpoints', {
        rawBody: 'url=x',
        headers: { 'content-type': 'text/plain' },
      }),
      415,
      'unsupported_media_type',
    );
    expectProblem(
      await call('POST', '/v1/webhook-endpoints', {
        body: { url: receiver.url, description: 'x'.repeat(1024 * 1024 + 10) },
      }),
      413,
      'payload_too_large',
    );
  });

  it('subscribes only to event types the server emits, or *: a typo is a 400 naming the known types', async () => {
    const typo = await call('POST', '/v1/webhook-endpoints', {
      body: { url: receiver.url, eventTypes: ['order.created', 'payment.suceeded'] },
    });
    expectProblem(typo, 400, 'validation_failed');
    expect(typo.body.errors).toEqual([
      expect.objectContaining({ field: 'eventTypes.1', pointer: '#/eventTypes/1' }),
    ]);
    expect(typo.body.errors[0].detail).toContain('payment.succeeded');
    const created = await createEndpoint({ eventTypes: [...EVENT_TYPES, '*'] });
    expect(created.eventTypes).toEqual([...EVENT_TYPES, '*']);
    expectProblem(
      await call('PATCH', `/v1/webhook-endpoints/${created.id}`, { body: { eventTypes: ['order.shipped'] } }),
      400,
      'validation_failed',
    );
    // The delivery filter takes the same types; an unknown one is a 400, not a silent empty list.
    expectProblem(await call('GET', '/v1/deliveries?eventType=order.shipped'), 400, 'validation_failed');
  });

  it("serves the dashboard the server's own event types", async () => {
    const response = await fetch(`${server.url}/dashboard/event-types`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: [...EVENT_TYPES] });
  });

  it('refuses forbidden destinations with 422 destination_url_forbidden', async () => {
    const strict = await startTestServer({ HOLDFAST_ALLOW_PRIVATE_DESTINATIONS: '0' });
    try {
      for (const url of [
        'https://127.0.0.1/hook',
        'https://localhost/hook',
        'https://10.1.2.3/hook',
        'https://[::1]/hook',
        'https://169.254.169.254/latest',
        'https://0x7f000001/hook',
        'ftp://example.com/hook',
      ]) {
        const response = await api(strict.url, 'POST', '/v1/webhook-endpoints', { body: { url } });
        expectProblem(response, 422, 'destination_url_forbidden');
      }
      const created = await api(strict.url, 'POST', '/v1/webhook-endpoints', {
        body: { url: 'https://hooks.example.com/holdfast' },
      });
      expect(created.status).toBe(201);
      const patched = await api(strict.url, 'PATCH', `/v1/webhook-endpoints/${created.body.id}`, {
        body: { url: 'https://192.168.0.10/hook' },
      });
      expectProblem(patched, 422, 'destination_url_forbidden');
    } finally {
      await strict.close();
    }
  });

  it('accepts only https in production mode', async () => {
    const production = await startTestServer({
      NODE_ENV: 'production',
      HOLDFAST_ALLOW_PRIVATE_DESTINATIONS: '0',
    });
    try {
      const plain = await api(production.url, 'POST', '/v1/webhook-endpoints', {
        body: { url: 'http://hooks.example.com/holdfast' },
      });
      expectProblem(plain, 422, 'destination_url_forbidden');
      const secure = await api(production.url, 'POST', '/v1/webhook-endpoints', {
        body: { url: 'https://hooks.example.com/holdfast' },
      });
      expect(secure.status).toBe(201);
    } finally {
      await production.close();
    }
  });

  it('takes maxPerSecond on create and PATCH and shows concurrency (CONTRACT section 10, Delivery pacing)', async () => {
    for (const bad of [0, -3, 1.5, '10']) {
      const refused = await call('POST', '/v1/webhook-endpoints', {
        body: { url: receiver.url, maxPerSecond: bad },
      });
      expectProblem(refused, 400, 'validation_failed');
    }
    const plain = await createEndpoint();
    expect(plain.maxPerSecond).toBeNull();
    // A new endpoint starts low and earns its concurrency (issue 35).
    expect(plain.concurrency).toEqual({ current: 4, max: 200 });
    const paced = await createEndpoint({ maxPerSecond: 25 });
    expect(paced.maxPerSecond).toBe(25);
    const lowered = await call('PATCH', `/v1/webhook-endpoints/${paced.id}`, { body: { maxPerSecond: 5 } });
    expect(lowered.body.maxPerSecond).toBe(5);
    const lifted = await call('PATCH', `/v1/webhook-endpoints/${paced.id}`, { body: { maxPerSecond: null } });
    expect(lifted.body.maxPerSecond).toBeNull();
    expectProblem(
      await call('PATCH', `/v1/webhook-endpoints/${paced.id}`, { body: { maxPerSecond: 0 } }),
      400,
      'validation_failed',
    );
    const listed = await call('GET', '/v1/webhook-endpoints?limit=100');
    const row = listed.body.data.find((e: { id: string }) => e.id === paced.id);
    expect(row).toMatchObject({ maxPerSecond: null, concurrency: { current: 4, max: 200 } });
  });

  it('updates, disables, re-enables, rotates the secret and deletes', async () => {
    const endpoint = await createEndpoint({ description: 'before' });
    const patched = await call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, {
      body: { description: null, eventTypes: ['subscription.created'], status: 'disabled' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      description: null,
      eventTypes: ['subscription.created'],
      status: 'disabled',
    });
    expect(patched.body.secret).toBeUndefined();
    const enabled = await call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, {
      body: { status: 'active' },
    });
    expect(enabled.body.status).toBe('active');
    expectProblem(
      await call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { body: { status: 'paused' } }),
      400,
      'validation_failed',
    );
    expectProblem(
      await call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { body: { secret: 'whsec_x' } }),
      400,
      'unknown_field',
    );

    const rotated = await call('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    expect(rotated.body.id).toBe(endpoint.id);

    const deleted = await call('DELETE', `/v1/webhook-endpoints/${endpoint.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.headers.get('request-id')).toMatch(/^req_/);
    expectProblem(await call('DELETE', `/v1/webhook-endpoints/${endpoint.id}`), 404, 'not_found');
    expectProblem(await call('GET', `/v1/webhook-endpoints/${endpoint.id}`), 404, 'not_found');
    expectProblem(await call('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`), 404, 'not_found');
  });

  it('answers 401 without a key, 403 without the scope, 404 for another account', async () => {
    const endpoint = await createEndpoint();
    const anonymous = await call('GET', '/v1/webhook-endpoints', { key: null });
    expectProblem(anonymous, 401, 'unauthenticated');
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expectProblem(
      await call('GET', `/v1/webhook-endpoints/${endpoint.id}`, { key: 'hf_test_nope' }),
      401,
      'unauthenticated',
    );
    expectProblem(await call('GET', '/v1/webhook-endpoints', { key: KEYS.none }), 403, 'forbidden');
    expectProblem(
      await call('POST', '/v1/webhook-endpoints', { key: KEYS.read, body: { url: receiver.url } }),
      403,
      'forbidden',
    );
    expect((await call('GET', '/v1/webhook-endpoints', { key: KEYS.read })).status).toBe(200);
    for (const [method, path] of [
      ['GET', `/v1/webhook-endpoints/${endpoint.id}`],
      ['PATCH', `/v1/webhook-endpoints/${endpoint.id}`],
      ['DELETE', `/v1/webhook-endpoints/${endpoint.id}`],
      ['POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`],
    ] as const) {
      const response = await call(method, path, {
        key: KEYS.other,
        ...(method === 'PATCH' ? { body: { description: 'mine now' } } : {}),
      });
      expectProblem(response, 404, 'not_found');
    }
    const others = await call('GET', '/v1/webhook-endpoints', { key: KEYS.other });
    expect(others.body.data.map((e: { id: string }) => e.id)).not.toContain(endpoint.id);
    expectProblem(
      await call('PUT', `/v1/webhook-endpoints/${endpoint.id}`, { body: {} }),
      405,
      'method_not_allowed',
    );
  });

  it('paginates with signed cursors bound to the account, sort and filter', async () => {
    for (let i = 0; i < 3; i++) await createEndpoint({ description: `page ${i}` });
    const first = await call('GET', '/v1/webhook-endpoints?limit=2&include=total');
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(2);
    expect(first.body.pageInfo.hasMore).toBe(true);
    expect(first.body.pageInfo.totalCount).toBeGreaterThanOrEqual(3);
    const cursor = first.body.pageInfo.nextCursor;
    const second = await call('GET', `/v1/webhook-endpoints?limit=2&cursor=${cursor}`);
    expect(second.status).toBe(200);
    expect(second.body.data[0].id).not.toBe(first.body.data[1].id);
    expect((await call('GET', '/v1/webhook-endpoints?limit=1000')).status).toBe(200);
    expectProblem(
      await call('GET', `/v1/webhook-endpoints?cursor=${cursor}`, { key: KEYS.other }),
      400,
      'invalid_cursor',
    );
    expectProblem(
      await call('GET', `/v1/webhook-endpoints?sort=createdAt&cursor=${cursor}`),
      400,
      'invalid_cursor',
    );
    expectProblem(await call('GET', '/v1/webhook-endpoints?cursor=abc'), 400, 'invalid_cursor');
    expectProblem(await call('GET', '/v1/webhook-endpoints?sort=url'), 400, 'invalid_sort');
    expectProblem(
      await call('GET', '/v1/webhook-endpoints?sort=createdAt,-createdAt,createdAt,createdAt'),
      400,
      'too_many_sort_keys',
    );
    const unknown = await call('GET', '/v1/webhook-endpoints?colour=red');
    expectProblem(unknown, 400, 'unknown_field');
    expect(unknown.body.errors).toContainEqual(expect.objectContaining({ field: 'colour' }));
    expectProblem(await call('GET', '/v1/webhook-endpoints?include=everything'), 400, 'validation_failed');
  });
});

describe('events, deliveries, notifications', () => {
  it('lists and fetches events with sequence and data.object.updatedAt; filters and pages deliveries', async () => {
    const endpoint = await createEndpoint({ eventTypes: ['order.created'] });
    const order = await call('POST', '/v1/orders', { body: { currency: 'EUR', total: 1200 } });
    expect(order.status, JSON.stringify(order.body)).toBe(201);

    const event = await eventually(async () => {
      const list = await call('GET', '/v1/events?limit=100');
      return list.body.data.find(
        (e: { type: string; data: { object: { id: string } } }) =>
          e.type === 'order.created' && e.data.object.id === order.body.id,
      );
    });
    expect(event.id).toMatch(/^evt_/);
    expect(typeof event.sequence).toBe('number');
    expect(event.data.object.updatedAt).toBe(order.body.updatedAt);
    const fetched = await call('GET', `/v1/events/${event.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(event);
    expectProblem(await call('GET', `/v1/events/${event.id}`, { key: KEYS.other }), 404, 'not_found');
    expectProblem(await call('GET', '/v1/events/evt_missing'), 404, 'not_found');
    expectProblem(await call('GET', '/v1/events', { key: KEYS.none }), 403, 'forbidden');
    expectProblem(await call('GET', '/v1/events?type=x'), 400, 'unknown_field');

    const delivery = await eventually(async () => {
      const list = await call('GET', `/v1/deliveries?endpoint=${endpoint.id}&status=succeeded`);
      return list.body.data.find((d: { event: string }) => d.event === event.id);
    });
    expect(delivery).toMatchObject({
      endpoint: endpoint.id,
      eventType: 'order.created',
      status: 'succeeded',
    });
    expect(delivery.attemptCount).toBe(1);
    const byId = await call('GET', `/v1/deliveries/${delivery.id}`);
    expect(byId.status).toBe(200);
    expect(byId.body.id).toBe(delivery.id);
    const attempts = await call('GET', `/v1/deliveries/${delivery.id}/attempts`);
    expect(attempts.status).toBe(200);
    expect(attempts.body.data[0]).toMatchObject({ status: 204, error: null });
    // The endpoint's one attempt is its stats' one latency: p50 and p95 of its hour are exactly it.
    const [attempt] = attempts.body.data;
    expect(Number.isInteger(attempt.latencyMs)).toBe(true);
    const stats = await call('GET', `/v1/webhook-endpoints/${endpoint.id}/stats`);
    const hour = stats.body.buckets.filter(
      (b: { start: string; end: string }) => b.start <= attempt.createdAt && attempt.createdAt < b.end,
    );
    expect(hour).toHaveLength(1);
    expect(hour[0]).toMatchObject({
      succeeded: 1,
      p50LatencyMs: attempt.latencyMs,
      p95LatencyMs: attempt.latencyMs,
    });

    const filtered = await call(
      'GET',
      `/v1/deliveries?eventType=order.created&endpoint=${endpoint.id}&limit=1`,
    );
    expect(filtered.status).toBe(200);
    for (const d of filtered.body.data) expect(d.eventType).toBe('order.created');
    if (filtered.body.pageInfo.nextCursor) {
      expectProblem(
        await call(
          'GET',
          `/v1/deliveries?eventType=order.updated&cursor=${filtered.body.pageInfo.nextCursor}`,
        ),
        400,
        'invalid_cursor',
      );
    }
    expect((await call('GET', '/v1/deliveries?sort=status,-createdAt')).status).toBe(200);
    expectProblem(await call('GET', '/v1/deliveries?sort=endpoint'), 400, 'invalid_sort');
    expectProblem(await call('GET', '/v1/deliveries?status=lost'), 400, 'validation_failed');
    expectProblem(await call('GET', `/v1/deliveries/${delivery.id}`, { key: KEYS.other }), 404, 'not_found');
    expectProblem(
      await call('GET', `/v1/deliveries/${delivery.id}/attempts`, { key: KEYS.other }),
      404,
      'not_found',
    );
    expectProblem(
      await call('POST', `/v1/deliveries/${delivery.id}/replay`, { key: KEYS.other }),
      404,
      'not_found',
    );
    expectProblem(
      await call('POST', `/v1/deliveries/${delivery.id}/replay`, { key: KEYS.read }),
      403,
      'forbidden',
    );
    expectProblem(await call('GET', '/v1/deliveries/dlv_missing/attempts'), 404, 'not_found');
    expectProblem(await call('GET', '/v1/deliveries', { key: null }), 401, 'unauthenticated');

    const replay = await call('POST', `/v1/deliveries/${delivery.id}/replay`);
    expect(replay.status).toBe(202);
    expect(replay.body.id).toBe(delivery.id);
    expect(replay.body.status).toBe('pending');
  });

  it('lists notifications and inbound events (empty pages, errors)', async () => {
    const notifications = await call('GET', '/v1/notifications?include=total');
    expect(notifications.status).toBe(200);
    expect(notifications.body.pageInfo).toMatchObject({ hasMore: false, nextCursor: null });
    expectProblem(await call('GET', '/v1/notifications', { key: KEYS.none }), 403, 'forbidden');
    expectProblem(await call('GET', '/v1/notifications?unread=1'), 400, 'unknown_field');
    const inbound = await call('GET', '/v1/inbound-events');
    expect(inbound.status).toBe(200);
    expect(inbound.body.data).toEqual([]);
    expectProblem(await call('GET', '/v1/inbound-events', { key: KEYS.none }), 403, 'forbidden');
    expectProblem(await call('GET', '/v1/inbound-events?status=odd'), 400, 'validation_failed');
    expectProblem(await call('GET', '/v1/inbound-events?cursor=zzz'), 400, 'invalid_cursor');
  });

  it('declares every webhook path, its sort keys and problem responses in /openapi.json', async () => {
    const response = await fetch(new URL('/openapi.json', server.url));
    const document = (await response.json()) as {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: { name: string; schema?: { description?: string } }[];
            responses: Record<string, { content?: Record<string, unknown> }>;
          }
        >
      >;
    };
    for (const [path, methods] of Object.entries({
      '/v1/webhook-endpoints': ['get', 'post'],
      '/v1/webhook-endpoints/{id}': ['get', 'patch', 'delete'],
      '/v1/webhook-endpoints/{id}/rotate-secret': ['post'],
      '/v1/events': ['get'],
      '/v1/events/{id}': ['get'],
      '/v1/deliveries': ['get'],
      '/v1/deliveries/{id}': ['get'],
      '/v1/deliveries/{id}/attempts': ['get'],
      '/v1/deliveries/{id}/replay': ['post'],
      '/v1/notifications': ['get'],
      '/v1/inbound-events': ['get'],
      '/hooks/{name}': ['post'],
    })) {
      for (const method of methods) {
        const operation = document.paths[path]?.[method];
        expect(operation, `${method} ${path}`).toBeDefined();
        expect(
          operation?.responses['400']?.content?.['application/problem+json'] ??
            operation?.responses['404']?.content?.['application/problem+json'],
        ).toBeDefined();
      }
    }
    const sort = document.paths['/v1/deliveries']?.get?.parameters?.find((p) => p.name === 'sort');
    expect(JSON.stringify(sort)).toContain('status');
    expect(JSON.stringify(sort)).toContain('createdAt');
  });
});
