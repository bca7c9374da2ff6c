import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type AttemptInfo,
  createDeliveryWorker,
  createEndpoint,
  enqueueEvent,
  getEndpoint,
  migrations,
  updateEndpoint,
} from '../src/index';
import { endPools, pgDb } from './fixtures/db';

afterAll(endPools);

// Issue 16, "Must show": adaptive concurrency waits out Retry-After and climbs back; maxPerSecond
// holds across workers (on a fake clock); deliveries due while an endpoint was disabled go out when it
// is enabled again (CONTRACT section 10).
const ACCOUNT = 'acct_pacing';
const options = { allowPrivateDestinations: true };

interface Hit {
  id: string;
}

/** A receiver that logs every request's arrival and answers with `respond(n)` (n from 1). */
async function receiver(respond: (n: number) => { status: number; headers?: Record<string, string> }) {
  const hits: Hit[] = [];
  const answers: { status: number }[] = [];
  const server = createServer((req, res) => {
    hits.push({ id: String(req.headers['webhook-id']) });
    const answer = respond(hits.length);
    req.resume();
    req.on('end', () => {
      res.writeHead(answer.status, answer.headers ?? {});
      answers.push({ status: answer.status });
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
      await enqueueEvent(fromPostgres(tx), {
        account: ACCOUNT,
        type: 't.x',
        resourceId: `${prefix}_${i}`,
        object: { i },
      });
    }
  });
}

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ max: 6 });
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
});
afterAll(() => db.close());
beforeEach(async () => {
  await db.sql`truncate holdfast_webhook_endpoints, holdfast_events, holdfast_delivery_attempts, holdfast_resource_sequences, holdfast_notifications cascade`;
});

describe('adaptive concurrency', () => {
  it('halves on 429, sends nothing before the Retry-After pause ends, then climbs back to the ceiling', async () => {
    const MAX = 8;
    const EVENTS = 60;
    // The first MAX requests (one full window) are refused with Retry-After: 2.
    const hook = await receiver((n) =>
      n <= MAX ? { status: 429, headers: { 'retry-after': '2' } } : { status: 204 },
    );
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: hook.url },
      { ...options, concurrencyMax: MAX, concurrencyInitial: MAX },
    );
    expect(endpoint.concurrency).toEqual({ current: MAX, max: MAX });
    await enqueue(db, EVENTS, 'aimd');
    // The worker's clock, a minute ahead of the deliveries' due time; moved by hand only.
    const start = Date.now() + 60_000;
    let clock = start;
    const attempts: AttemptInfo[] = [];
    const worker = createDeliveryWorker({
      db: pgDb(db),
      schedule: [0, 0],
      perEndpointConcurrency: MAX,
      concurrency: 32,
      ...options,
      now: () => clock,
      onError: () => {},
      onAttempt: (info) => attempts.push(info),
    });
    const limit = async () =>
      (await getEndpoint(fromPostgres(db.sql), { account: ACCOUNT, id: endpoint.id }))?.concurrency.current;

    // One full window, all refused: the limit halves (once per outcome batch: overload news is
    // written at once) and the endpoint pauses for 2 s.
    expect(await worker.runOnce()).toBe(MAX);
    expect(hook.answers.map((a) => a.status)).toEqual(Array(MAX).fill(429));
    const halved = (await limit()) ?? MAX;
    expect(halved).toBeLessThanOrEqual(MAX / 2);
    clock = start + 1999;
    expect(await worker.runOnce()).toBe(0);
    expect(hook.hits).toHaveLength(MAX);
    // From the end of the pause, each round sends the whole limit, which grows by one per full
    // window of fast successes back to the ceiling.
    clock = start + 2000;
    const rounds: number[] = [];
    while (attempts.filter((a) => a.outcome === 'succeeded').length < EVENTS && rounds.length < EVENTS) {
      rounds.push(await worker.runOnce());
      clock += 1;
    }
    await worker.stop();
    expect(rounds[0]).toBe(Math.floor(halved));
    expect(rounds.reduce((sum, n) => sum + n, 0)).toBe(EVENTS);
    expect(Math.max(...rounds)).toBe(MAX);
    for (let i = 1; i < rounds.length - 1; i += 1)
      expect(rounds[i]).toBeGreaterThanOrEqual(rounds[i - 1] ?? 0);
    expect(await limit()).toBe(MAX);
    expect(new Set(hook.hits.map((h) => h.id)).size).toBe(EVENTS);
    expect(attempts.filter((a) => a.outcome === 'retry' && a.status === 429)).toHaveLength(MAX);
    await hook.close();
  }, 120_000);

  it('waits while an endpoint is disabled, then sends what fell due once it is enabled again', async () => {
    const hook = await receiver(() => ({ status: 204 }));
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: hook.url },
      options,
    );
    await enqueue(db, 3, 'disabled');
    await updateEndpoint(fromPostgres(db.sql), { account: ACCOUNT, id: endpoint.id, status: 'disabled' });
    const worker = createDeliveryWorker({
      db: pgDb(db),
      schedule: [0],
      unsafeTimeoutMs: 5000,
      ...options,
      onError: () => {},
    });
    expect(await worker.runOnce()).toBe(0);
    expect(hook.hits).toHaveLength(0);
    await updateEndpoint(fromPostgres(db.sql), { account: ACCOUNT, id: endpoint.id, status: 'active' });
    expect(await worker.runOnce()).toBe(3);
    expect(new Set(hook.hits.map((h) => h.id)).size).toBe(3);
    await worker.stop();
    await hook.close();
  }, 60_000);

  it('refuses a maxPerSecond that is not an integer of at least 1', async () => {
    const hook = await receiver(() => ({ status: 204 }));
    for (const bad of [0, -1, 1.5]) {
      await expect(
        createEndpoint(fromPostgres(db.sql), { account: ACCOUNT, url: hook.url, maxPerSecond: bad }, options),
      ).rejects.toMatchObject({ code: 'validation_failed' });
    }
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: hook.url, maxPerSecond: 5 },
      options,
    );
    expect(endpoint.maxPerSecond).toBe(5);
    const lifted = await updateEndpoint(fromPostgres(db.sql), {
      account: ACCOUNT,
      id: endpoint.id,
      maxPerSecond: null,
    });
    expect(lifted?.maxPerSecond).toBeNull();
    await hook.close();
  });
});

describe('maxPerSecond', () => {
  it('holds across workers: one token per 1/rate s, and a worker finds none the other just took', async () => {
    const RATE = 10;
    const EVENTS = 12;
    const hook = await receiver(() => ({ status: 204 }));
    await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: hook.url, maxPerSecond: RATE },
      options,
    );
    await enqueue(db, EVENTS, 'rate');
    const start = Date.now() + 60_000;
    let clock = start;
    const workers = [1, 2].map(() =>
      createDeliveryWorker({
        db: pgDb(db),
        schedule: [0],
        unsafeTimeoutMs: 5000,
        concurrency: 16,
        perEndpointConcurrency: 16,
        ...options,
        now: () => clock,
        onError: () => {},
      }),
    );
    const [a, b] = workers as [(typeof workers)[number], (typeof workers)[number]];
    // The bucket holds max(1, rate / 10) = 1 token and gains `rate` a second; the clock moves one
    // token's time per step. Odd steps: both workers at once, then both again at the same instant
    // (the bucket is empty by then). Even steps: one worker alone, alternately, then the other.
    const steps: number[][] = [];
    let alone = 0;
    while (hook.hits.length < EVENTS && steps.length < 2 * EVENTS) {
      if (steps.length % 2 === 0) {
        steps.push([
          ...(await Promise.all([a.runOnce(), b.runOnce()])),
          await a.runOnce(),
          await b.runOnce(),
        ]);
      } else {
        const [first, second] = alone % 2 === 0 ? [a, b] : [b, a];
        alone += 1;
        steps.push([await first.runOnce(), await second.runOnce()]);
      }
      clock += 1000 / RATE;
    }
    await Promise.all(workers.map((w) => w.stop()));
    expect(steps).toHaveLength(EVENTS);
    for (const [i, step] of steps.entries()) {
      expect(step.reduce((sum, n) => sum + n, 0)).toBe(1);
      // Alone, the first worker takes the token and the second finds none.
      if (i % 2 === 1) expect(step).toEqual([1, 0]);
    }
    expect(new Set(hook.hits.map((h) => h.id)).size).toBe(EVENTS);
    await hook.close();
  }, 120_000);
});
