import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Db } from '@holdfast/db';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import fc from 'fast-check';
import type postgres from 'postgres';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createDeliveryWorker,
  createEndpoint,
  type DeliveryWorker,
  enqueueEvent,
  getDelivery,
  getEndpoint,
  migrations,
  recoverDeliveries,
  replayDelivery,
  updateEndpoint,
} from '../src/index';
import { resumeWaitingLines } from '../src/lease';
import { endPools, pgDb, pgQueue } from './fixtures/db';

afterAll(endPools);

// Ordered delivery per resource (`ordering: 'per-resource'`), through real HTTP: a receiver logs
// every request with the resource it is about, its sequence, and how many requests of that
// resource were open when it came in.

interface Arrival {
  resource: string;
  sequence: number;
  webhookId: string;
  /** Requests of this resource open at the receiver when this one arrived, itself included. */
  open: number;
  status: number;
}

type Answer = (arrival: { resource: string; sequence: number; webhookId: string; seen: number }) => number;

async function receiver(answer: Answer) {
  const log: Arrival[] = [];
  const open = new Map<string, number>();
  const seen = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const resource = String(event.data.object.id);
      const webhookId = String(req.headers['webhook-id']);
      const now = (open.get(resource) ?? 0) + 1;
      open.set(resource, now);
      const times = (seen.get(webhookId) ?? 0) + 1;
      seen.set(webhookId, times);
      const status = answer({ resource, sequence: event.sequence, webhookId, seen: times });
      log.push({ resource, sequence: event.sequence, webhookId, open: now, status });
      // The answer waits a moment, so a second request of the same resource sent meanwhile
      // would find this one open.
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
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let db: TestDatabase;
/** A second pool for the second worker on PostgreSQL (as a second process would have). */
let second: { sql: postgres.Sql; close(): Promise<void> } | undefined;
const ACCOUNT = 'acct_ordering';
/** Errors of the workers' loops: a lease that broke the one-in-flight index would land here. */
const errors: unknown[] = [];
const options = { allowPrivateDestinations: true };

beforeAll(async () => {
  db = await createTestDatabase();
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
  if (realPostgres) second = await db.connectAgain(4);
});
afterAll(async () => {
  await second?.close();
  await db.close();
});
beforeEach(async () => {
  await db.sql`truncate holdfast_webhook_endpoints, holdfast_events, holdfast_delivery_attempts, holdfast_resource_sequences, holdfast_notifications cascade`;
  errors.length = 0;
});

/** A clock the test moves forward: retries fall due when the test says so. */
function testClock() {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    advance(ms: number): void {
      offset += ms;
    },
  };
}

function worker(target: Db, extra: Partial<Parameters<typeof createDeliveryWorker>[0]> = {}): DeliveryWorker {
  return createDeliveryWorker({
    db: target,
    schedule: [0, 0],
    unsafeTimeoutMs: 5000,
    pollMs: 5,
    concurrency: 16,
    perEndpointConcurrency: 8,
    ...options,
    onError: (error) => errors.push(error),
    ...extra,
  });
}

/**
 * Two workers on their own pools where there are two (one process each, in effect): one on
 * node-postgres, one on stock postgres.js, the same statements through either adapter.
 */
function twoWorkers(extra: Partial<Parameters<typeof createDeliveryWorker>[0]> = {}): DeliveryWorker[] {
  return [worker(pgDb(db), extra), worker(fromPostgres(second?.sql ?? db.sql), extra)];
}

async function until(check: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 10));
}

async function statuses(): Promise<Map<string, number>> {
  const rows = await db.sql<{ status: string; n: number }[]>`
    select status, count(*)::int as n from holdfast_deliveries group by status`;
  return new Map(rows.map((row) => [row.status, row.n]));
}

/** Events `1..perResource` for each resource, interleaved across resources as they would come. */
async function enqueue(resources: readonly string[], perResource: number): Promise<void> {
  for (let n = 1; n <= perResource; n += 1) {
    for (const resource of resources) {
      await enqueueEvent(fromPostgres(db.sql), {
        account: ACCOUNT,
        type: 'order.updated',
        resourceId: resource,
        object: { id: resource, version: n },
      });
    }
  }
}

function byResource(log: readonly Arrival[]): Map<string, Arrival[]> {
  const map = new Map<string, Arrival[]>();
  for (const arrival of log) map.set(arrival.resource, [...(map.get(arrival.resource) ?? []), arrival]);
  return map;
}

describe('ordered delivery per resource', () => {
  it('creates endpoints with ordering "none" unless asked, shows and changes it, and refuses anything else', async () => {
    const plain = await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: 'http://127.0.0.1:9999/a' },
      options,
    );
    expect(plain.endpoint.ordering).toBe('none');
    const ordered = await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: 'http://127.0.0.1:9999/b', ordering: 'per-resource' },
      options,
    );
    expect(ordered.endpoint.ordering).toBe('per-resource');
    const changed = await updateEndpoint(fromPostgres(db.sql), {
      account: ACCOUNT,
      id: plain.endpoint.id,
      ordering: 'per-resource',
    });
    expect(changed?.ordering).toBe('per-resource');
    expect(
      (await getEndpoint(fromPostgres(db.sql), { account: ACCOUNT, id: plain.endpoint.id }))?.ordering,
    ).toBe('per-resource');
    const bad = {
      account: ACCOUNT,
      url: 'http://127.0.0.1:9999/c',
      ordering: 'fifo',
    } as unknown as Parameters<typeof createEndpoint>[1];
    await expect(createEndpoint(fromPostgres(db.sql), bad, options)).rejects.toMatchObject({ status: 400 });
    expect((await db.sql`select count(*)::int as n from holdfast_webhook_endpoints`)[0]?.n).toBe(2);
  });

  it('200 events over 20 resources, each first attempt refused, two workers: every resource in sequence order, one at a time', async () => {
    const hook = await receiver(({ seen }) => (seen === 1 ? 500 : 204));
    await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: hook.url, ordering: 'per-resource' },
      options,
    );
    const resources = Array.from({ length: 20 }, (_, i) => `ord_${i}`);
    await enqueue(resources, 10);
    const workers = twoWorkers();
    for (const w of workers) w.start();
    await until(async () => (await statuses()).get('succeeded') === 200);
    await Promise.all(workers.map((w) => w.stop()));
    await hook.close();

    expect(hook.log).toHaveLength(400);
    for (const resource of resources) {
      const arrivals = byResource(hook.log).get(resource) ?? [];
      // Each event twice (refused, then accepted) before the next one is sent at all.
      expect(arrivals.map((a) => [a.sequence, a.status])).toEqual(
        Array.from({ length: 10 }, (_, i) => [
          [i + 1, 500],
          [i + 1, 204],
        ]).flat(),
      );
    }
    expect(Math.max(...hook.log.map((a) => a.open))).toBe(1);
    expect(errors).toEqual([]);
    // Resources were sent side by side, not one after another.
    expect(new Set(hook.log.slice(0, 40).map((a) => a.resource)).size).toBeGreaterThan(1);
  });

  it('events written while two workers deliver them: every resource in sequence order, one at a time, none left waiting', async () => {
    const hook = await receiver(({ sequence, seen }) => (seen === 1 && sequence % 3 === 0 ? 500 : 204));
    await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: hook.url, ordering: 'per-resource' },
      options,
    );
    const workers = twoWorkers();
    for (const w of workers) w.start();
    const resources = ['ord_h1', 'ord_h2', 'ord_h3', 'ord_h4'];
    // Written one after another while the lines drain, so new deliveries keep meeting heads
    // that are finishing.
    for (let n = 0; n < 30; n += 1) {
      await Promise.all(
        resources.map((resource) =>
          enqueueEvent(fromPostgres(second?.sql ?? db.sql), {
            account: ACCOUNT,
            type: 'order.updated',
            resourceId: resource,
            object: { id: resource, version: n },
          }),
        ),
      );
      await new Promise((r) => setTimeout(r, 2));
    }
    await until(async () => (await statuses()).get('succeeded') === 120);
    await Promise.all(workers.map((w) => w.stop()));
    await hook.close();
    for (const resource of resources) {
      const accepted = (byResource(hook.log).get(resource) ?? []).filter((a) => a.status === 204);
      expect(accepted.map((a) => a.sequence)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      const sequences = (byResource(hook.log).get(resource) ?? []).map((a) => a.sequence);
      expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    }
    expect(Math.max(...hook.log.map((a) => a.open))).toBe(1);
    expect(errors).toEqual([]);
  });

  it('a head that keeps failing holds back its own resource only; once dead it stops blocking', async () => {
    const clock = testClock();
    const hook = await receiver(({ resource, sequence }) =>
      resource === 'ord_stuck' && sequence === 1 ? 500 : 204,
    );
    await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: hook.url, ordering: 'per-resource' },
      options,
    );
    const unordered = await receiver(() => 204);
    await createEndpoint(fromPostgres(db.sql), { account: ACCOUNT, url: unordered.url }, options);
    await enqueue(['ord_stuck', 'ord_a', 'ord_b', 'ord_c'], 5);
    // One retry an hour later (on the test's clock), then dead.
    const workers = twoWorkers({ schedule: [3_600_000], now: clock.now });
    for (const w of workers) w.start();
    await until(async () => (await statuses()).get('succeeded') === 15 + 20);

    const stuck = () => (byResource(hook.log).get('ord_stuck') ?? []).map((a) => [a.sequence, a.status]);
    expect(stuck()).toEqual([[1, 500]]);
    for (const resource of ['ord_a', 'ord_b', 'ord_c']) {
      expect((byResource(hook.log).get(resource) ?? []).map((a) => a.sequence)).toEqual([1, 2, 3, 4, 5]);
    }
    // The unordered endpoint beside it got everything, the stuck resource's events included.
    expect(unordered.log).toHaveLength(20);
    const [head] = await db.sql`
      select d.status from holdfast_deliveries d join holdfast_events e on e.id = d.event_id
      join holdfast_webhook_endpoints w on w.id = d.endpoint_id
      where e.resource_id = 'ord_stuck' and e.sequence = 1 and w.ordering = 'per-resource'`;
    expect(head?.status).toBe('failed');

    // The retry falls due, fails too, and the head is dead: the rest of its line goes, in order.
    clock.advance(4_000_000);
    await until(async () => (await statuses()).get('succeeded') === 19 + 20);
    await Promise.all(workers.map((w) => w.stop()));
    expect((await statuses()).get('dead')).toBe(1);
    expect(stuck()).toEqual([
      [1, 500],
      [1, 500],
      [2, 204],
      [3, 204],
      [4, 204],
      [5, 204],
    ]);
    expect(Math.max(...hook.log.map((a) => a.open))).toBe(1);
    expect(errors).toEqual([]);
    await hook.close();
    await unordered.close();
  });

  it('a replayed dead delivery joins the back of its line: sent after what was queued, never beside it', async () => {
    let refuse = true;
    const hook = await receiver(({ sequence }) => (refuse && sequence === 1 ? 500 : 204));
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: hook.url, ordering: 'per-resource' },
      options,
    );
    await enqueue(['ord_r'], 1);
    const w = worker(pgDb(db), { schedule: [] });
    await w.runOnce();
    const [dead] = await db.sql<{ id: string }[]>`select id from holdfast_deliveries where status = 'dead'`;
    expect(dead).toBeDefined();
    // Later events queue while nothing is sent; then the dead one is replayed.
    await enqueue(['ord_r'], 2);
    refuse = false;
    const replayed = await replayDelivery(fromPostgres(db.sql), { account: ACCOUNT, id: dead?.id ?? '' });
    // Back in its line, behind the two queued: it waits, undue, for its turn.
    expect(replayed?.status).toBe('pending');
    expect(replayed?.nextAttemptAt).toBeNull();
    for (let i = 0; i < 4; i += 1) await w.runOnce();
    expect(hook.log.map((a) => [a.sequence, a.status])).toEqual([
      [1, 500],
      [2, 204],
      [3, 204],
      [1, 204],
    ]);
    // Bulk recovery of a dead delivery does the same.
    refuse = true;
    await enqueue(['ord_s'], 1);
    await w.runOnce();
    await enqueue(['ord_s'], 2);
    refuse = false;
    expect(
      await recoverDeliveries(fromPostgres(db.sql), { account: ACCOUNT, endpointId: endpoint.id, since: 0 }),
    ).toBe(1);
    for (let i = 0; i < 4; i += 1) await w.runOnce();
    expect((byResource(hook.log).get('ord_s') ?? []).map((a) => [a.sequence, a.status])).toEqual([
      [1, 500],
      [2, 204],
      [3, 204],
      [1, 204],
    ]);
    await w.stop();
    await hook.close();
  });

  it('a delivery behind another waits undue, and falls due when the one before it finishes', async () => {
    const hook = await receiver(() => 204);
    await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: hook.url, ordering: 'per-resource' },
      options,
    );
    await enqueue(['ord_w'], 3);
    const line = async () =>
      db.sql<{ id: string; status: string }[]>`
        select d.id, d.status from holdfast_deliveries d join holdfast_events e on e.id = d.event_id
        order by e.sequence`;
    const [first, second, third] = await line();
    const view = async (id: string | undefined) =>
      getDelivery(fromPostgres(db.sql), { account: ACCOUNT, id: id ?? '' });
    expect((await view(first?.id))?.nextAttemptAt).not.toBeNull();
    expect((await view(second?.id))?.nextAttemptAt).toBeNull();
    expect((await view(third?.id))?.nextAttemptAt).toBeNull();
    const w = worker(pgDb(db));
    expect(await w.runOnce()).toBe(1);
    expect((await view(second?.id))?.nextAttemptAt).not.toBeNull();
    expect((await view(third?.id))?.nextAttemptAt).toBeNull();
    expect(await w.runOnce()).toBe(1);
    expect(await w.runOnce()).toBe(1);
    expect(await w.runOnce()).toBe(0);
    expect(hook.log.map((a) => a.sequence)).toEqual([1, 2, 3]);
    await w.stop();
    await hook.close();
  });

  it("a line left waiting with nothing ahead of it (its head finished unseen) is resumed by the workers' repair", async () => {
    const hook = await receiver(() => 204);
    await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: hook.url, ordering: 'per-resource' },
      options,
    );
    await enqueue(['ord_lost', 'ord_kept'], 2);
    const w = worker(pgDb(db));
    expect(await w.runOnce()).toBe(2);
    // What a delivery created while the one before it finished looks like: its line's head,
    // waiting with no time to fall due.
    await db.sql`
      update holdfast_deliveries d set next_attempt_at = null from holdfast_events e
      where e.id = d.event_id and e.resource_id = 'ord_lost' and d.status = 'pending'`;
    expect(await w.runOnce()).toBe(1);
    expect(await w.runOnce()).toBe(0);
    expect(await resumeWaitingLines(pgQueue(db))).toBe(1);
    expect(await resumeWaitingLines(pgQueue(db))).toBe(0);
    expect(await w.runOnce()).toBe(1);
    expect((byResource(hook.log).get('ord_lost') ?? []).map((a) => a.sequence)).toEqual([1, 2]);
    await w.stop();
    await hook.close();
  });

  it('property: for any events over a few resources and any refusals, each resource gets its attempts in sequence order, each event until accepted or dead', async () => {
    // Refusals per event: 0 to 3. With two retries (three attempts), three refusals end it dead.
    const eventArb = fc.record({
      resource: fc.constantFrom('ord_p', 'ord_q', 'ord_r'),
      refusals: fc.integer({ min: 0, max: 3 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(eventArb, { minLength: 1, maxLength: 12 }), async (events) => {
        await db.sql`truncate holdfast_webhook_endpoints, holdfast_events, holdfast_delivery_attempts, holdfast_resource_sequences cascade`;
        const refusals = new Map<string, number>();
        const hook = await receiver(({ resource, sequence, seen }) =>
          seen <= (refusals.get(`${resource} ${sequence}`) ?? 0) ? 500 : 204,
        );
        await createEndpoint(
          fromPostgres(db.sql),
          { account: ACCOUNT, url: hook.url, ordering: 'per-resource' },
          options,
        );
        const expected = new Map<string, number[]>();
        for (const event of events) {
          const sent = await enqueueEvent(fromPostgres(db.sql), {
            account: ACCOUNT,
            type: 'order.updated',
            resourceId: event.resource,
            object: { id: event.resource },
          });
          refusals.set(`${event.resource} ${sent.sequence}`, event.refusals);
          const attempts = Math.min(event.refusals + 1, 3);
          expected.set(event.resource, [
            ...(expected.get(event.resource) ?? []),
            ...Array.from({ length: attempts }, () => sent.sequence),
          ]);
        }
        const w = worker(pgDb(db), { schedule: [0, 0] });
        while ((await w.runOnce()) > 0) {
          // each round sends every line's head once
        }
        await w.stop();
        await hook.close();
        for (const [resource, sequences] of expected) {
          expect((byResource(hook.log).get(resource) ?? []).map((a) => a.sequence)).toEqual(sequences);
        }
        expect(Math.max(...hook.log.map((a) => a.open))).toBe(1);
        expect(errors).toEqual([]);
      }),
      { numRuns: 15 },
    );
  });

  it('an endpoint switched to per-resource orders what is created from then on', async () => {
    const hook = await receiver(() => 204);
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: hook.url },
      options,
    );
    await enqueue(['ord_x'], 3);
    const rows = await db.sql`select ordering_key from holdfast_deliveries`;
    expect(rows.map((r) => r.ordering_key)).toEqual([null, null, null]);
    await updateEndpoint(fromPostgres(db.sql), {
      account: ACCOUNT,
      id: endpoint.id,
      ordering: 'per-resource',
    });
    await enqueue(['ord_x'], 1);
    const keyed = await db.sql`select ordering_key from holdfast_deliveries where ordering_key is not null`;
    expect(keyed.map((r) => r.ordering_key)).toEqual(['ord_x']);
    await hook.close();
  });
});
