import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT,
  api,
  createStorage,
  eventually,
  freePort,
  type Receiver,
  startReceiver,
  startTestServer,
  type TestServer,
  type TestStorage,
} from './webhooks-harness';

// The full loops over real HTTP: business event -> outbox -> delivery to a real local receiver
// (signature checked with the standardwebhooks library), retries -> dead -> replay -> succeeded,
// 410 -> endpoint disabled with a notification, and the server delivering to its own
// /hooks/{name} receiver, with the event processed in /v1/inbound-events.

let storage: TestStorage;
let server: TestServer;
let receiver: Receiver;
let loopEndpoint: { id: string; secret: string };

// The self-loop needs the receiver configured with the secret of an endpoint that points at the
// server's own /hooks/loop: secrets are generated, so the server starts once on a fixed port to
// create that endpoint, then restarts on the same port and storage with the secret configured.
beforeAll(async () => {
  receiver = await startReceiver();
  // The caller keeps the database across the restart (a schema of the shared PGlite, or of PostgreSQL).
  storage = await createStorage();
  const port = String(await freePort());
  const setup = await startTestServer({ PORT: port }, storage);
  const created = await api(setup.url, 'POST', '/v1/webhook-endpoints', {
    body: {
      url: new URL('/hooks/loop', setup.url).toString(),
      eventTypes: ['order.created'],
      description: 'self-loop',
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  loopEndpoint = created.body;
  await setup.close();
  server = await startTestServer(
    {
      PORT: port,
      HOLDFAST_RETRY_SCHEDULE: '1s,1s',
      HOLDFAST_RECEIVER_SECRETS: JSON.stringify({
        loop: { account: ACCOUNT, secrets: [loopEndpoint.secret] },
      }),
    },
    storage,
  );
});

afterAll(async () => {
  await server?.close();
  await receiver?.close();
  await storage?.drop();
});

const call = (method: string, path: string, options: Parameters<typeof api>[3] = {}) =>
  api(server.url, method, path, options);

async function createOrder(total: number) {
  const order = await call('POST', '/v1/orders', { body: { currency: 'EUR', total } });
  expect(order.status, JSON.stringify(order.body)).toBe(201);
  return order.body;
}

describe('delivery to a real receiver', () => {
  it('delivers a business event signed so that standardwebhooks verifies it', async () => {
    const endpoint = (
      await call('POST', '/v1/webhook-endpoints', {
        body: { url: receiver.url, eventTypes: ['order.created'] },
      })
    ).body;
    const order = await createOrder(4200);
    const request = await eventually(async () =>
      receiver.received.find((r) => r.body.includes(order.id) && r.headers['webhook-id'] !== undefined),
    );
    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toMatch(/^application\/json/);
    const verified = new Webhook(endpoint.secret).verify(request.body, {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    }) as { id: string; type: string; sequence: number; data: { object: { id: string; updatedAt: string } } };
    expect(verified.type).toBe('order.created');
    expect(verified.id).toBe(request.headers['webhook-id']);
    expect(verified.data.object.id).toBe(order.id);
    expect(verified.data.object.updatedAt).toBe(order.updatedAt);

    const event = await call('GET', `/v1/events/${verified.id}`);
    expect(event.status).toBe(200);
    expect(event.body.sequence).toBe(verified.sequence);
  });

  it('logs failing attempts, ends dead, and a replay succeeds with the same Webhook-Id', async () => {
    const failing = await startReceiver();
    failing.respond = () => ({ status: 500, body: 'receiver is down' });
    try {
      const endpoint = (
        await call('POST', '/v1/webhook-endpoints', {
          body: { url: failing.url, eventTypes: ['order.created'] },
        })
      ).body;
      const order = await createOrder(100);
      const dead = await eventually(
        async () => {
          const list = await call('GET', `/v1/deliveries?status=dead&endpoint=${endpoint.id}`);
          return list.body.data[0];
        },
        20_000,
        'the delivery to end dead',
      );
      expect(dead.attemptCount).toBe(3);
      const attempts = await call('GET', `/v1/deliveries/${dead.id}/attempts`);
      expect(attempts.body.data).toHaveLength(3);
      for (const attempt of attempts.body.data) {
        expect(attempt).toMatchObject({ status: 500, responseBodyPrefix: 'receiver is down' });
      }
      const ids = new Set(failing.received.map((r) => r.headers['webhook-id']));
      expect(ids.size).toBe(1);
      expect(failing.received.some((r) => r.body.includes(order.id))).toBe(true);

      failing.respond = () => ({ status: 200, body: 'ok' });
      const replay = await call('POST', `/v1/deliveries/${dead.id}/replay`);
      expect(replay.status).toBe(202);
      expect(replay.body).toMatchObject({ id: dead.id, status: 'pending' });
      const succeeded = await eventually(async () => {
        const current = await call('GET', `/v1/deliveries/${dead.id}`);
        return current.body.status === 'succeeded' ? current.body : undefined;
      });
      // The count is the total; a replay restarts only the retry schedule.
      expect(succeeded.attemptCount).toBe(4);
      expect(new Set(failing.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
      const log = await call('GET', `/v1/deliveries/${dead.id}/attempts?limit=100`);
      expect(log.body.data.map((a: { status: number }) => a.status).sort()).toEqual([200, 500, 500, 500]);
    } finally {
      await failing.close();
    }
  });

  it('disables an endpoint answering 410 Gone and notifies the account', async () => {
    const gone = await startReceiver();
    gone.respond = () => ({ status: 410 });
    try {
      const endpoint = (
        await call('POST', '/v1/webhook-endpoints', {
          body: { url: gone.url, eventTypes: ['order.created'] },
        })
      ).body;
      await createOrder(1);
      await eventually(async () => {
        const current = await call('GET', `/v1/webhook-endpoints/${endpoint.id}`);
        return current.body.status === 'disabled' ? true : undefined;
      });
      const notifications = await call('GET', '/v1/notifications');
      expect(notifications.status).toBe(200);
      expect(
        notifications.body.data.some((n: { endpoint: string | null }) => n.endpoint === endpoint.id),
      ).toBe(true);
      const dead = await call('GET', `/v1/deliveries?status=dead&endpoint=${endpoint.id}`);
      expect(dead.body.data).toHaveLength(1);
    } finally {
      await gone.close();
    }
  });
});

describe('the self-loop', () => {
  it('self-loop: the server delivers to its own /hooks/loop and processes the event', async () => {
    const order = await createOrder(777);
    const delivery = await eventually(async () => {
      const list = await call('GET', `/v1/deliveries?endpoint=${loopEndpoint.id}&status=succeeded&limit=100`);
      return list.body.data.find((d: { event: string }) => d.event !== undefined);
    });
    const inbound = await eventually(async () => {
      const list = await call('GET', '/v1/inbound-events?limit=100');
      return list.body.data.find(
        (e: { receiver: string; data: { data?: { object?: { id?: string } } }; status: string }) =>
          e.receiver === 'loop' && e.data.data?.object?.id === order.id && e.status !== 'pending',
      );
    });
    expect(inbound).toMatchObject({ type: 'order.created', status: 'processed', resource: order.id });
    expect(inbound.webhookId).toMatch(/^evt_/);
    const event = await call('GET', `/v1/events/${inbound.webhookId}`);
    expect(event.status).toBe(200);
    expect(inbound.sequence).toBe(event.body.sequence);
    expect(delivery.status).toBe('succeeded');
  });
});
