import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedPgliteDataDir } from '@holdfast/pg/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config';
import { type RunningServer, startServer } from '../src/server';
import { call } from './api-harness';
import { type Child, runCli, startServerProcess } from './process-harness';
import { createStorage, type TestStorage } from './webhooks-harness';

// Issue 32, "A demo worth opening": `npm start` on an empty database writes a small, realistic
// data set through the API with the demo key, and endpoints on the server's built-in receiver
// (the one loopback destination allowed without a flag) with succeeded, retried and dead deliveries;
// a second start, production mode and a database holding data never seed.

/** The `data` of a list answer, as records. */
function rows(body: unknown): Record<string, unknown>[] {
  const data = typeof body === 'object' && body !== null && 'data' in body ? body.data : undefined;
  if (!Array.isArray(data)) throw new Error(`not a list: ${JSON.stringify(body).slice(0, 200)}`);
  return data.filter((row): row is Record<string, unknown> => typeof row === 'object' && row !== null);
}
const list = async (url: string, key: string, path: string): Promise<Record<string, unknown>[]> => {
  const answer = await call(url, 'GET', path, { key });
  expect(answer.status, path).toBe(200);
  return rows(answer.body);
};
const counts = (rows: Record<string, unknown>[], field: string) => {
  const out: Record<string, number> = {};
  for (const row of rows) out[String(row[field])] = (out[String(row[field])] ?? 0) + 1;
  return out;
};

describe('the demo data set on npm start', () => {
  let storage: TestStorage;
  let server: RunningServer | undefined;
  afterAll(async () => {
    await server?.close();
    await storage?.drop();
  });
  const env = (extra: Record<string, string> = {}) => ({
    ...storage.env,
    PORT: '0',
    HOST: '127.0.0.1',
    HOLDFAST_SEED_DEMO_KEY: '1',
    HOLDFAST_SEED_DEMO_DATA: '1',
    HOLDFAST_RETRY_SCHEDULE: '300ms',
    ...extra,
  });
  const start = (extra?: Record<string, string>) =>
    startServer({ env: env(extra), ...(storage.database ? { database: storage.database } : {}) });

  it('writes orders in every status, payments, a refund, a subscription and deliveries of every outcome', {
    timeout: 120_000,
  }, async () => {
    storage = await createStorage();
    server = await start();
    const key = server.demoKey ?? '';
    expect(key).toMatch(/^hf_test_/);
    expect(server.demoData).toEqual({ orders: 4, payments: 4, refunds: 1, subscriptions: 1, endpoints: 3 });
    const url = server.url;

    const orders = await list(url, key, '/v1/orders');
    expect(counts(orders, 'status')).toEqual({ pending: 2, shipped: 1, cancelled: 1 });
    const payments = await list(url, key, '/v1/payments');
    expect(counts(payments, 'status')).toEqual({ succeeded: 3, failed: 1 });
    const refunded = orders.find((o) => o.description === 'Pour-over kettle');
    expect((await list(url, key, `/v1/orders/${String(refunded?.id)}/refunds`)).length).toBe(1);
    expect((await list(url, key, '/v1/subscriptions')).map((s) => s.status)).toHaveLength(1);
    const events = await list(url, key, '/v1/events?limit=100');
    expect(new Set(events.map((e) => e.type))).toEqual(
      new Set([
        'order.created',
        'order.updated',
        'order.cancelled',
        'order.refunded',
        'payment.succeeded',
        'payment.failed',
        'subscription.created',
      ]),
    );

    // Each endpoint of the built-in receiver ends where its behaviour says.
    const endpoints = await list(url, key, '/v1/webhook-endpoints');
    const byPath = new Map(endpoints.map((e) => [new URL(String(e.url)).pathname, String(e.id)]));
    expect([...byPath.keys()].sort()).toEqual([
      '/demo/receiver/flaky',
      '/demo/receiver/ok',
      '/demo/receiver/rejects',
    ]);
    const settled = async (path: string, status: string) => {
      const deliveries = await list(url, key, `/v1/deliveries?endpoint=${byPath.get(path)}&limit=100`);
      return deliveries.length > 0 && deliveries.every((d) => d.status === status) ? deliveries : undefined;
    };
    for (const [path, status] of [
      ['/demo/receiver/ok', 'succeeded'],
      ['/demo/receiver/flaky', 'succeeded'],
      ['/demo/receiver/rejects', 'dead'],
    ] as const) {
      await expect.poll(() => settled(path, status), { timeout: 60_000, interval: 250 }).toBeDefined();
    }
    // The flaky receiver's deliveries succeeded on their second attempt: a retry in every log.
    const flaky = (await settled('/demo/receiver/flaky', 'succeeded')) ?? [];
    for (const d of flaky) {
      const attempts = await list(url, key, `/v1/deliveries/${String(d.id)}/attempts`);
      expect(attempts.map((a) => a.status).sort()).toEqual([200, 503]);
    }
  });

  it('a second start on the same database seeds nothing', { timeout: 60_000 }, async () => {
    if (server === undefined) throw new Error('the first test did not start the server');
    const before = await server.db.query<{ n: number }>('select count(*)::int as n from holdfast_events');
    await server.close();
    server = await start();
    expect(server.demoKey).toBeUndefined();
    expect(server.demoData).toBeUndefined();
    const after = await server.db.query<{ n: number }>('select count(*)::int as n from holdfast_events');
    expect(after[0]?.n).toBe(before[0]?.n);
  });

  it('production mode never seeds, whatever the variable says', () => {
    const base = { HOLDFAST_SEED_DEMO_DATA: '1', HOLDFAST_SEED_DEMO_KEY: '1' };
    expect(loadConfig({ ...base, NODE_ENV: 'production' }).seedDemoData).toBe(false);
    expect(loadConfig({ ...base, NODE_ENV: 'development' }).seedDemoData).toBe(true);
    expect(loadConfig({ NODE_ENV: 'test' }).seedDemoData).toBe(false);
    expect(loadConfig({ NODE_ENV: 'development', HOLDFAST_SEED_DEMO_DATA: '0' }).seedDemoData).toBe(false);
  });
});

describe('npm run seed against a running server (embedded PGlite)', () => {
  let dir = '';
  let server: Child | undefined;
  afterAll(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('seeds an empty database once, endpoints on the built-in receiver without any flag, and refuses a second time', {
    timeout: 300_000,
  }, async () => {
    dir = await mkdtemp(join(tmpdir(), 'holdfast-seed-'));
    await seedPgliteDataDir(dir);
    const env = { DATABASE_URL: '', HOLDFAST_DATA_DIR: dir, HOLDFAST_SEED_DEMO_KEY: '0' };
    server = await startServerProcess(env);
    const seedEnv = { ...env, HOLDFAST_URL: server.url ?? '' };
    const seed = (extra: Record<string, string> = {}) =>
      runCli([], { ...seedEnv, ...extra }, 'src/seed-cli.ts');

    const production = await seed({ NODE_ENV: 'production' });
    expect(production.code, production.output).toBe(2);

    const first = await seed();
    expect(first.code, first.output).toBe(0);
    expect(first.output).toContain('3 webhook endpoints');
    const key = /^(hf_test_[A-Za-z0-9_-]+)$/m.exec(first.output)?.[1] ?? '';
    const orders = await call(server.url ?? '', 'GET', '/v1/orders', { key });
    expect(rows(orders.body)).toHaveLength(4);

    const second = await seed();
    expect(second.code, second.output).toBe(1);
    expect(second.output).toContain('already holds data: nothing was seeded');
    const again = await call(server.url ?? '', 'GET', '/v1/orders', { key });
    expect(rows(again.body)).toHaveLength(4);
  });
});
