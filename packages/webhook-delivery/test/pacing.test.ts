import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { childDatabaseUrl, createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type AttemptInfo,
  createDeliveryWorker,
  createEndpoint,
  enqueueEvent,
  getEndpoint,
  migrations,
  updateEndpoint,
} from '../src/postgres';

// Issue 16, "Must show": adaptive concurrency waits out Retry-After and climbs back; maxPerSecond
// holds across worker processes; deliveries due while an endpoint was disabled go out when it
// is enabled again (CONTRACT section 10).
const WORKER = fileURLToPath(new URL('./fixtures/worker.ts', import.meta.url));
const PACKAGE = fileURLToPath(new URL('..', import.meta.url));
const ACCOUNT = 'acct_pacing';
const options = { allowPrivateDestinations: true };

interface Hit {
  at: number;
  id: string;
}

/** A receiver that logs every request's arrival and answers with `respond(n)` (n from 1). */
async function receiver(respond: (n: number) => { status: number; headers?: Record<string, string> }) {
  const hits: Hit[] = [];
  const answers: { at: number; status: number }[] = [];
  const server = createServer((req, res) => {
    hits.push({ at: Date.now(), id: String(req.headers['webhook-id']) });
    const answer = respond(hits.length);
    req.resume();
    req.on('end', () => {
      res.writeHead(answer.status, answer.headers ?? {});
      answers.push({ at: Date.now(), status: answer.status });
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    hits,
    answers,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function enqueue(db: TestDatabase, count: number, prefix: string): Promise<void> {
  await db.sql.begin(async (tx) => {
    for (let i = 0; i < count; i += 1) {
      await enqueueEvent(tx, { account: ACCOUNT, type: 't.x', resourceId: `${prefix}_${i}`, object: { i } });
    }
  });
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ max: 6 });
  for (const migration of migrations) await db.sql.unsafe(migration.sql);
});
afterAll(() => db.close());
beforeEach(async () => {
  await db.sql`truncate holdfast_webhook_endpoints, holdfast_events, holdfast_resource_sequences, holdfast_notifications cascade`;
});

describe('adaptive concurrency', () => {
  it('halves on 429, sends nothing inside the Retry-After window, then climbs back to the ceiling', async () => {
    const MAX = 8;
    const EVENTS = 60;
    // The first MAX requests (one full window) are refused with Retry-After: 2.
    const hook = await receiver((n) =>
      n <= MAX ? { status: 429, headers: { 'retry-after': '2' } } : { status: 204 },
    );
    const { endpoint } = await createEndpoint(
      db.sql,
      { account: ACCOUNT, url: hook.url },
      { ...options, concurrencyMax: MAX },
    );
    expect(endpoint.concurrency).toEqual({ current: MAX, max: MAX });
    await enqueue(db, EVENTS, 'aimd');
    const attempts: AttemptInfo[] = [];
    const worker = createDeliveryWorker({
      sql: db.sql,
      schedule: [0, 0],
      unsafeTimeoutMs: 2000,
      perEndpointConcurrency: MAX,
      concurrency: 32,
      pollMs: 10,
      ...options,
      onError: () => {},
      onAttempt: (info) => attempts.push(info),
    });
    const seen: number[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const current = (await getEndpoint(db.sql, { account: ACCOUNT, id: endpoint.id }))?.concurrency
          .current;
        if (current !== undefined) seen.push(current);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    worker.start();
    // Every delivery succeeds in the end: the refused ones come back after the 2 s they asked for.
    await until(() => attempts.filter((a) => a.outcome === 'succeeded').length === EVENTS, 'every delivery');
    await worker.stop();
    sampling = false;
    await sampler;

    const refused = hook.answers.filter((a) => a.status === 429);
    expect(refused).toHaveLength(MAX);
    const firstRefusal = Math.min(...refused.map((a) => a.at));
    // No request arrived inside the window that the first 429 opened.
    const later = hook.hits.slice(MAX);
    expect(later.length).toBe(EVENTS);
    for (const hit of later) expect(hit.at).toBeGreaterThanOrEqual(firstRefusal + 2000 - 5);
    // The limit dropped (halved at least once), then climbed back to the ceiling.
    expect(Math.min(...seen)).toBeLessThanOrEqual(MAX / 2);
    expect((await getEndpoint(db.sql, { account: ACCOUNT, id: endpoint.id }))?.concurrency).toEqual({
      current: MAX,
      max: MAX,
    });
    expect(attempts.filter((a) => a.outcome === 'retry' && a.status === 429)).toHaveLength(MAX);
    await hook.close();
  }, 60_000);

  it('waits while an endpoint is disabled, then sends what fell due once it is enabled again', async () => {
    const hook = await receiver(() => ({ status: 204 }));
    const { endpoint } = await createEndpoint(db.sql, { account: ACCOUNT, url: hook.url }, options);
    await enqueue(db, 3, 'disabled');
    await updateEndpoint(db.sql, { account: ACCOUNT, id: endpoint.id, status: 'disabled' });
    const worker = createDeliveryWorker({
      sql: db.sql,
      schedule: [0],
      unsafeTimeoutMs: 1000,
      ...options,
      onError: () => {},
    });
    expect(await worker.runOnce()).toBe(0);
    expect(hook.hits).toHaveLength(0);
    await updateEndpoint(db.sql, { account: ACCOUNT, id: endpoint.id, status: 'active' });
    expect(await worker.runOnce()).toBe(3);
    expect(new Set(hook.hits.map((h) => h.id)).size).toBe(3);
    await worker.stop();
    await hook.close();
  });

  it('refuses a maxPerSecond that is not an integer of at least 1', async () => {
    const hook = await receiver(() => ({ status: 204 }));
    for (const bad of [0, -1, 1.5]) {
      await expect(
        createEndpoint(db.sql, { account: ACCOUNT, url: hook.url, maxPerSecond: bad }, options),
      ).rejects.toMatchObject({ code: 'validation_failed' });
    }
    const { endpoint } = await createEndpoint(
      db.sql,
      { account: ACCOUNT, url: hook.url, maxPerSecond: 5 },
      options,
    );
    expect(endpoint.maxPerSecond).toBe(5);
    const lifted = await updateEndpoint(db.sql, { account: ACCOUNT, id: endpoint.id, maxPerSecond: null });
    expect(lifted?.maxPerSecond).toBeNull();
    await hook.close();
  });
});

describe.skipIf(!realPostgres)(
  'maxPerSecond (needs DATABASE_URL: two worker processes share one database)',
  () => {
    const children = new Set<ChildProcess>();
    afterAll(() => {
      for (const child of children) child.kill('SIGKILL');
    });

    function startWorker(): Promise<{ child: ChildProcess; attempts: () => number }> {
      const child = spawn(process.execPath, ['--conditions=@holdfast/source', '--import', 'tsx', WORKER], {
        cwd: PACKAGE,
        env: {
          ...process.env,
          DATABASE_URL: childDatabaseUrl(db),
          HOLDFAST_RETRY_SCHEDULE: '1s',
          TIMEOUT_MS: '2000',
          LEASE_MS: '10000',
          CONCURRENCY: '16',
          PER_ENDPOINT: '16',
          ATTEMPT_LOG: '1',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.add(child);
      let attempts = 0;
      return new Promise((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
        child.stdout?.on('data', (chunk: Buffer) => {
          const text = chunk.toString();
          attempts += text.split('\n').filter((line) => line.startsWith('attempt ')).length;
          if (text.includes('ready')) resolve({ child, attempts: () => attempts });
        });
      });
    }

    it('holds across two worker processes', async () => {
      const RATE = 10;
      const EVENTS = 40;
      const hook = await receiver(() => ({ status: 204 }));
      await createEndpoint(db.sql, { account: ACCOUNT, url: hook.url, maxPerSecond: RATE }, options);
      const workers = await Promise.all([startWorker(), startWorker()]);
      const stop = ({ child }: { child: ChildProcess }) =>
        new Promise<void>((resolve) => {
          child.removeAllListeners('exit');
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        });
      await enqueue(db, EVENTS, 'rate');
      // Which of two racing processes takes each token is chance (one took 32 of 40, once all
      // 40): halfway through, the one that sent more stops, so the other sends the rest and the
      // bucket is shown held by both, across the handover too.
      await until(() => hook.hits.length >= EVENTS / 2, 'half the deliveries', 30_000);
      const [busier, other] = [...workers].sort((a, b) => b.attempts() - a.attempts()) as [
        (typeof workers)[number],
        (typeof workers)[number],
      ];
      await stop(busier);
      await until(() => hook.hits.length >= EVENTS, 'every delivery', 30_000);
      await new Promise((r) => setTimeout(r, 300)); // nothing more should come
      await stop(other);
      expect(hook.hits).toHaveLength(EVENTS);
      // Both processes sent some, and together they kept the rate: a burst of at most
      // max(1, rate / 10) tokens, then `rate` per second. Without the limit the 40 would leave
      // in well under a second (32 slots between the two workers).
      for (const { attempts } of workers) expect(attempts()).toBeGreaterThan(0);
      const times = hook.hits.map((h) => h.at).sort((a, b) => a - b);
      const span = (times[times.length - 1] ?? 0) - (times[0] ?? 0);
      expect(span).toBeGreaterThanOrEqual(((EVENTS - 1 - 1) / RATE) * 1000);
      for (let i = 0; i < times.length; i += 1) {
        const windowEnd = (times[i] ?? 0) + 1000;
        const inWindow = times.filter((t) => t >= (times[i] ?? 0) && t < windowEnd).length;
        expect(inWindow).toBeLessThanOrEqual(RATE + 1);
      }
      await hook.close();
    }, 60_000);
  },
);
