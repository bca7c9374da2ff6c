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
// most 100 characters, a small answer), and none blocks the server's event loop for long: the
// server runs in its own process (src/main.ts, API role) with perf_hooks.monitorEventLoopDelay
// preloaded, and reports the delay beside the requests.
//
// The target is 50 ms per request; bench/hostile measures it. This test asserts ten times that
// (500 ms), because it runs on a shared 2-core machine beside other test files, where a
// garbage collection or a descheduled process adds delays no request caused; before the bounds,
// these bodies held the loop 1.7 to 8 s, so the ceiling still tells the difference.
const CEILING_MS = 500;

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
  it('are answered within the bounds, without holding the event loop', async () => {
    const all = shapes(orderId);
    for (const shape of all) expect(shape.body?.length ?? 0, shape.name).toBeLessThanOrEqual(1024 * 1024);
    // A first round warms the process up (compiling code paths is not what is measured).
    for (const shape of all) {
      const { status, text } = await send(server.url, shape);
      expectBounded(shape, status, text);
    }
    await server.loopDelay();
    const delays: Record<string, number> = {};
    for (const shape of all) {
      for (let round = 0; round < 3; round += 1) {
        const { status, text } = await send(server.url, shape);
        expectBounded(shape, status, text);
      }
      delays[shape.name] = (await server.loopDelay()).maxMs;
    }
    for (const [name, maxMs] of Object.entries(delays)) expect(maxMs, name).toBeLessThan(CEILING_MS);
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
