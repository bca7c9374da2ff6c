import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API_KEYS,
  type MonitoredServer,
  type Shape,
  send,
  shapes,
  startMonitoredServer,
} from './hostile-harness';
import { createStorage, type TestStorage } from './webhooks-harness';

// Issue 28, finding 2: the largest bodies the limits allow (1 MiB) are answered within the
// bounds of CONTRACT section 11 (at most 20 errors, the rest counted in detail, echoes of at
// most 100 characters, a small answer), and the server keeps serving other clients while it
// answers them. How long one holds the event loop (target 50 ms) is a measurement, not a test:
// bench/hostile prints it per shape. Here the server runs in its own process (src/main.ts, API
// role), and the checks are counts: every hostile body answered within bounds, and beside each
// one another client's read served.

let storage: TestStorage;
let server: MonitoredServer;
let orderId = '';

beforeAll(async () => {
  storage = await createStorage();
  server = await startMonitoredServer({
    ...storage.env,
    HOLDFAST_API_KEYS: API_KEYS,
    HOLDFAST_ROLE: 'api',
    HOLDFAST_RATE_LIMIT: '100000/1s',
    HOLDFAST_ADDRESS_RATE_LIMIT: '100000/1s',
  });
  const created = await send(server.url, {
    name: 'order',
    method: 'POST',
    path: '/v1/orders',
    body: Buffer.from('{"currency":"EUR","total":100}'),
  });
  expect(created.status).toBe(201);
  orderId = (JSON.parse(created.text) as { id: string }).id;
}, 200_000);

afterAll(async () => {
  await server?.stop();
  await storage?.drop();
});

interface Problem {
  code: string;
  detail: string;
  errors?: { field: string; pointer?: string; detail?: string }[];
}

function expectBounded(shape: Shape, status: number, text: string) {
  expect(status, shape.name).toBeLessThan(500);
  if (shape.name === 'normal order') return expect(status).toBe(201);
  expect(status, `${shape.name}: ${text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
  expect(text.length, shape.name).toBeLessThan(8192);
  const document = JSON.parse(text) as Problem;
  expect((document.errors ?? []).length, shape.name).toBeLessThanOrEqual(20);
  for (const entry of document.errors ?? []) {
    expect(entry.field.length, shape.name).toBeLessThanOrEqual(100);
    expect((entry.pointer ?? '').length, shape.name).toBeLessThanOrEqual(100);
  }
}

describe('the largest hostile bodies the limits allow', () => {
  it('are answered within the bounds, and another client is served beside each of them', async () => {
    const all = shapes(orderId);
    for (const shape of all) expect(shape.body?.length ?? 0, shape.name).toBeLessThanOrEqual(1024 * 1024);
    const read: Shape = { name: 'read the order', method: 'GET', path: `/v1/orders/${orderId}` };
    const ROUNDS = 3;
    let answered = 0;
    const served: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const shape of all) {
        // Both on connections of their own, at once: the read is not queued behind the body.
        const [hostile, other] = await Promise.all([send(server.url, shape), send(server.url, read)]);
        expectBounded(shape, hostile.status, hostile.text);
        answered += 1;
        served.push(other.status);
        expect((JSON.parse(other.text) as { id: string }).id, shape.name).toBe(orderId);
      }
    }
    expect(answered).toBe(ROUNDS * all.length);
    expect(served).toEqual(Array.from({ length: ROUNDS * all.length }, () => 200));
  }, 300_000);

  it('counts the unknown fields beyond the 20 it lists, and echoes a 1 MiB name in 100 characters', async () => {
    const all = shapes(orderId);
    const pick = (name: string) => all.find((shape) => shape.name === name) ?? all[0];
    const many = JSON.parse(
      (await send(server.url, pick('about 990 unknown fields') as Shape)).text,
    ) as Problem;
    expect(many.code).toBe('unknown_field');
    expect(many.errors).toHaveLength(20);
    expect(many.detail).toMatch(/… and \d{3} more\.$/);
    const long = JSON.parse((await send(server.url, pick('one 1 MiB field name') as Shape)).text) as Problem;
    expect(long.code).toBe('unknown_field');
    expect(long.errors?.[0]?.field).toBe(`${'x'.repeat(99)}…`);
    expect(long.detail.length).toBeLessThan(200);
    const metadata = JSON.parse(
      (await send(server.url, pick('metadata, 1,000 keys') as Shape)).text,
    ) as Problem;
    expect(metadata.detail).toBe('metadata: at most 50 keys');
  }, 60_000);
});
