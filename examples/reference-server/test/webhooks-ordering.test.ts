import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, eventually, startTestServer, type TestServer } from './webhooks-harness';

// CONTRACT section 11, "Ordered delivery", over HTTP: an endpoint with `ordering: "per-resource"`
// gets the deliveries of one resource one at a time, in the order of their events; other
// resources are not held back. The receiver logs, for every request, the resource, the event's
// sequence, its answer, and how many requests of that resource were open when it came in.

interface Arrival {
  resource: string;
  sequence: number;
  status: number;
  open: number;
}

async function startLoggingReceiver(answer: (resource: string, sequence: number, seen: number) => number) {
  const log: Arrival[] = [];
  const open = new Map<string, number>();
  const seen = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const resource = String(event.data.object.id);
      const id = String(req.headers['webhook-id']);
      const now = (open.get(resource) ?? 0) + 1;
      open.set(resource, now);
      seen.set(id, (seen.get(id) ?? 0) + 1);
      const status = answer(resource, event.sequence, seen.get(id) ?? 1);
      log.push({ resource, sequence: event.sequence, status, open: now });
      // Held a moment, so another request of the resource sent meanwhile would find it open.
      setTimeout(() => {
        open.set(resource, (open.get(resource) ?? 1) - 1);
        res.statusCode = status;
        res.end();
      }, 3);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    log,
    ofResource: (resource: string) => log.filter((a) => a.resource === resource),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let server: TestServer;
const call = (method: string, path: string, options: Parameters<typeof api>[3] = {}) =>
  api(server.url, method, path, options);

beforeAll(async () => {
  // Retries every 50 ms, a thousand of them: a first attempt refused is retried at once, and a
  // head refused every time stays failing (not dead) for the whole test.
  server = await startTestServer({
    HOLDFAST_RETRY_SCHEDULE: Array.from({ length: 1000 }, () => '50ms').join(','),
    HOLDFAST_DELIVERY_POLL: '20ms',
  });
});
afterAll(async () => {
  await server?.close();
});

/** An order and `updates` changes of it: `1 + updates` events of one resource, in order. */
async function orderWithUpdates(updates: number): Promise<string> {
  const order = await call('POST', '/v1/orders', { body: { currency: 'EUR', total: 1000 } });
  expect(order.status, JSON.stringify(order.body)).toBe(201);
  for (let n = 1; n <= updates; n += 1) {
    const updated = await call('PATCH', `/v1/orders/${order.body.id}`, {
      body: { description: `change ${n}` },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
  }
  return order.body.id;
}

async function createEndpoint(body: Record<string, unknown>) {
  const created = await call('POST', '/v1/webhook-endpoints', { body });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

async function disable(id: string): Promise<void> {
  expect((await call('PATCH', `/v1/webhook-endpoints/${id}`, { body: { status: 'disabled' } })).status).toBe(
    200,
  );
}

describe('ordering on webhook endpoints', () => {
  it('is "none" unless asked, shown in every answer, changed by PATCH, and anything else is 400', async () => {
    const plain = await createEndpoint({ url: 'http://127.0.0.1:9999/a', eventTypes: ['order.created'] });
    expect(plain.ordering).toBe('none');
    const bad = await call('POST', '/v1/webhook-endpoints', {
      body: { url: 'http://127.0.0.1:9999/b', ordering: 'fifo' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
    expect(JSON.stringify(bad.body.errors)).toContain('ordering');
    const patched = await call('PATCH', `/v1/webhook-endpoints/${plain.id}`, {
      body: { ordering: 'per-resource' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.ordering).toBe('per-resource');
    expect((await call('GET', `/v1/webhook-endpoints/${plain.id}`)).body.ordering).toBe('per-resource');
    const listed = await call('GET', '/v1/webhook-endpoints');
    expect(listed.body.data.find((e: { id: string }) => e.id === plain.id)?.ordering).toBe('per-resource');
    const refused = await call('PATCH', `/v1/webhook-endpoints/${plain.id}`, {
      body: { ordering: 'sorted' },
    });
    expect(refused.status).toBe(400);
    expect((await call('GET', `/v1/webhook-endpoints/${plain.id}`)).body.ordering).toBe('per-resource');
    await call('DELETE', `/v1/webhook-endpoints/${plain.id}`);
  });

  it('200 events over 20 resources, every first attempt refused: each resource arrives in sequence order, one at a time', async () => {
    const receiver = await startLoggingReceiver((_resource, _sequence, seen) => (seen === 1 ? 500 : 204));
    const endpoint = await createEndpoint({
      url: receiver.url,
      eventTypes: ['order.created', 'order.updated'],
      ordering: 'per-resource',
    });
    expect(endpoint.ordering).toBe('per-resource');
    const orders: string[] = [];
    for (let i = 0; i < 20; i += 1) orders.push(await orderWithUpdates(9));
    await eventually(
      async () => (receiver.log.filter((a) => a.status === 204).length >= 200 ? true : undefined),
      120_000,
      '200 accepted deliveries',
    );
    await disable(endpoint.id);
    for (const order of orders) {
      const arrivals = receiver.ofResource(order);
      expect(arrivals.map((a) => [a.sequence, a.status])).toEqual(
        Array.from({ length: 10 }, (_, i) => [
          [i + 1, 500],
          [i + 1, 204],
        ]).flat(),
      );
    }
    expect(receiver.log).toHaveLength(400);
    expect(Math.max(...receiver.log.map((a) => a.open))).toBe(1);
    await receiver.close();
  });

  it('a resource whose head keeps failing holds back only itself; an unordered endpoint beside it gets everything', async () => {
    // The first resource the ordered endpoint sees is the stuck order (nothing else exists yet); it
    // is taken from the request itself, since its delivery can arrive before POST /v1/orders answers.
    let stuck = '';
    const receiver = await startLoggingReceiver((resource) => {
      if (stuck === '') stuck = resource;
      return resource === stuck ? 500 : 204;
    });
    const unordered = await startLoggingReceiver(() => 204);
    const types = ['order.created', 'order.updated'];
    const ordered = await createEndpoint({ url: receiver.url, eventTypes: types, ordering: 'per-resource' });
    const plain = await createEndpoint({ url: unordered.url, eventTypes: types });
    // The stuck order's first event is refused at every attempt (its retries come every 50 ms).
    const first = await call('POST', '/v1/orders', { body: { currency: 'EUR', total: 1000 } });
    stuck ||= first.body.id;
    expect(stuck).toBe(first.body.id);
    for (let n = 1; n <= 4; n += 1) {
      await call('PATCH', `/v1/orders/${stuck}`, { body: { description: `change ${n}` } });
    }
    const others: string[] = [];
    for (let i = 0; i < 4; i += 1) others.push(await orderWithUpdates(4));
    await eventually(
      async () =>
        others.every((o) => receiver.ofResource(o).length === 5) &&
        unordered.log.length === 25 &&
        receiver.ofResource(stuck).length >= 2
          ? true
          : undefined,
      60_000,
      'the other resources and the unordered endpoint',
    );
    const stuckAttempts = receiver.ofResource(stuck);
    await disable(ordered.id);
    await disable(plain.id);
    for (const order of others) {
      expect(receiver.ofResource(order).map((a) => a.sequence)).toEqual([1, 2, 3, 4, 5]);
    }
    // Only the head of the stuck order was ever sent to the ordered endpoint.
    expect(new Set(stuckAttempts.map((a) => a.sequence))).toEqual(new Set([1]));
    expect(
      unordered
        .ofResource(stuck)
        .map((a) => a.sequence)
        .sort((a, b) => a - b),
    ).toEqual([1, 2, 3, 4, 5]);
    expect(Math.max(...receiver.log.map((a) => a.open))).toBe(1);
    await receiver.close();
    await unordered.close();
  });
});
