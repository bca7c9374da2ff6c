import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { isProblemError } from '@holdfast/problem-details';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createDeliveryWorker,
  createEndpoint,
  type DeliveryWorker,
  enqueueEvent,
  getDelivery,
  listAttempts,
  migrations,
  recoverDeliveries,
  replayDelivery,
} from '../src/index';
import { endPools, pgDb } from './fixtures/db';

afterAll(endPools);

// A delivery whose attempt is running is never leased twice: replay answers "in flight"
// (409 delivery_in_flight with Retry-After), recover skips it, and the attempt log, the
// delivery's attempt count and the receiver's view agree. The delivery is leased through the
// worker's own lease path (a started worker polling), at a receiver that holds each request open
// until the test answers it.

const ACCOUNT = 'acct_in_flight';
let db: TestDatabase;

/** A receiver that holds every request until `answer()`; counts concurrent requests per webhook-id. */
async function holdingReceiver() {
  const open = new Map<string, number>();
  const most = new Map<string, number>();
  const waiting: ((status: number) => void)[] = [];
  let received = 0;
  const server = createServer((req, res) => {
    const id = String(req.headers['webhook-id']);
    const now = (open.get(id) ?? 0) + 1;
    open.set(id, now);
    most.set(id, Math.max(most.get(id) ?? 0, now));
    received += 1;
    req.resume();
    waiting.push((status) => {
      open.set(id, (open.get(id) ?? 1) - 1);
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    open: () => [...open.values()].reduce((a, b) => a + b, 0),
    most,
    received: () => received,
    /** Answers every request held now. */
    answer: (status: number) => {
      for (const respond of waiting.splice(0)) respond(status);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2_000; i += 1) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('condition not reached');
}

/** A few of the worker's polls: long enough for it to lease whatever is due. */
const polls = () => new Promise((resolve) => setTimeout(resolve, 120));

beforeAll(async () => {
  db = await createTestDatabase();
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
});
afterAll(() => db.close());
beforeEach(async () => {
  await db.sql`truncate holdfast_webhook_endpoints, holdfast_events, holdfast_delivery_attempts, holdfast_resource_sequences, holdfast_notifications cascade`;
});

function startWorker(schedule: readonly number[]): DeliveryWorker {
  const worker = createDeliveryWorker({
    db: pgDb(db),
    schedule,
    unsafeTimeoutMs: 20_000,
    allowPrivateDestinations: true,
    pollMs: 10,
    onError: () => {},
  });
  worker.start();
  return worker;
}

/** N replays at once: each refused as in flight (with a Retry-After of 1 to 10 s), none replayed. */
async function storm(id: string, n: number): Promise<void> {
  const results = await Promise.allSettled(
    Array.from({ length: n }, () => replayDelivery(fromPostgres(db.sql), { account: ACCOUNT, id })),
  );
  for (const result of results) {
    expect(result.status).toBe('rejected');
    if (result.status !== 'rejected') continue;
    const error: unknown = result.reason;
    expect(isProblemError(error) && error.code).toBe('delivery_in_flight');
    if (isProblemError(error)) {
      expect(error.status).toBe(409);
      expect(error.retryAfter).toBeGreaterThanOrEqual(1);
      expect(error.retryAfter).toBeLessThanOrEqual(10);
    }
  }
}

describe('a delivery in flight', () => {
  it('is not replayed while its attempt runs (409), is once it ended (202), and a replay storm never doubles it', async () => {
    const hook = await holdingReceiver();
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: hook.url, ordering: 'per-resource' },
      { allowPrivateDestinations: true, concurrencyMax: 8 },
    );
    const event = await enqueueEvent(fromPostgres(db.sql), {
      account: ACCOUNT,
      type: 'order.updated',
      resourceId: 'ord_1',
      object: { id: 'ord_1' },
    });
    // A later event about the same resource waits behind the first on this ordered endpoint.
    const later = await enqueueEvent(fromPostgres(db.sql), {
      account: ACCOUNT,
      type: 'order.cancelled',
      resourceId: 'ord_1',
      object: { id: 'ord_1' },
    });
    const [delivery] = await db.sql<{ id: string }[]>`
      select id from holdfast_deliveries where event_id = ${event.id}`;
    const id = delivery?.id ?? '';
    const worker = startWorker([0]);
    try {
      await until(() => hook.open() === 1);
      await storm(id, 20);
      await polls();
      // Still the one attempt: the lease was left alone, and the line's next one waits.
      expect(hook.open()).toBe(1);
      expect(hook.received()).toBe(1);
      const leased = await getDelivery(fromPostgres(db.sql), { account: ACCOUNT, id });
      expect(leased).toMatchObject({ status: 'pending', attemptCount: 0 });

      hook.answer(204);
      await until(
        async () =>
          (await getDelivery(fromPostgres(db.sql), { account: ACCOUNT, id }))?.status === 'succeeded',
      );
      const replayed = await replayDelivery(fromPostgres(db.sql), { account: ACCOUNT, id });
      expect(replayed?.status).toBe('pending');
      // The replay went to the back of the line: the later event is sent first, then the replay.
      await until(() => hook.open() === 1);
      expect(hook.most.get(later.id)).toBe(1);
      hook.answer(204);
      await until(() => hook.received() === 3 && hook.open() === 1);
      await storm(id, 20);
      await polls();
      expect(hook.open()).toBe(1);
      hook.answer(204);
      await until(
        async () =>
          (await getDelivery(fromPostgres(db.sql), { account: ACCOUNT, id }))?.status === 'succeeded',
      );
    } finally {
      hook.answer(204);
      await worker.stop();
      await hook.close();
    }
    // One attempt at a time for that webhook-id, and the counts agree with the log.
    expect(hook.most.get(event.id)).toBe(1);
    expect(hook.received()).toBe(3);
    const after = await getDelivery(fromPostgres(db.sql), { account: ACCOUNT, id });
    const attempts = await listAttempts(fromPostgres(db.sql), { account: ACCOUNT, id: id });
    expect(after?.attemptCount).toBe(2);
    expect(attempts).toHaveLength(2);
    const [row] = await db.sql<{ in_flight: number }[]>`
      select (p.in_flight - coalesce((select sum(r.released) from holdfast_endpoint_releases r
        where r.endpoint_id = p.endpoint_id), 0))::int as in_flight
      from holdfast_endpoint_pacing p where p.endpoint_id = ${endpoint.id}`;
    expect(row?.in_flight).toBe(0);
  });

  it('is skipped by recover, which counts only what it re-queued', async () => {
    const hook = await holdingReceiver();
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: hook.url },
      { allowPrivateDestinations: true, concurrencyMax: 8 },
    );
    const event = await enqueueEvent(fromPostgres(db.sql), {
      account: ACCOUNT,
      type: 'order.updated',
      resourceId: 'ord_2',
      object: { id: 'ord_2' },
    });
    const worker = startWorker([0, 0]);
    try {
      await until(() => hook.open() === 1);
      hook.answer(500);
      // The retry (status failed, due at once) is leased and held: in flight.
      await until(() => hook.received() === 2 && hook.open() === 1);
      const recovered = await recoverDeliveries(fromPostgres(db.sql), {
        account: ACCOUNT,
        endpointId: endpoint.id,
        since: 0,
      });
      expect(recovered).toBe(0);
      await polls();
      expect(hook.open()).toBe(1);
      hook.answer(500);
      await until(() => hook.received() === 3 && hook.open() === 1);
      hook.answer(500);
      const [dead] = await db.sql<
        { id: string }[]
      >`select id from holdfast_deliveries where event_id = ${event.id}`;
      await until(
        async () =>
          (await getDelivery(fromPostgres(db.sql), { account: ACCOUNT, id: dead?.id ?? '' }))?.status ===
          'dead',
      );
      // Dead now: recovered and counted.
      expect(
        await recoverDeliveries(fromPostgres(db.sql), {
          account: ACCOUNT,
          endpointId: endpoint.id,
          since: 0,
        }),
      ).toBe(1);
      await until(() => hook.received() === 4);
      hook.answer(204);
    } finally {
      hook.answer(204);
      await worker.stop();
      await hook.close();
    }
    expect(hook.most.get(event.id)).toBe(1);
  });

  it('recover re-queues at most `max` deliveries a call, the oldest first', async () => {
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: 'http://127.0.0.1:1024/hook' },
      { allowPrivateDestinations: true },
    );
    for (let i = 0; i < 5; i += 1) {
      await enqueueEvent(
        fromPostgres(db.sql),
        {
          account: ACCOUNT,
          type: 'order.updated',
          resourceId: `ord_${i}`,
          object: { id: `ord_${i}` },
        },
        { now: () => Date.parse('2026-11-20T10:00:00Z') + i * 1000 },
      );
    }
    await db.sql`update holdfast_deliveries set status = 'dead', next_attempt_at = null`;
    const recover = () =>
      recoverDeliveries(fromPostgres(db.sql), {
        account: ACCOUNT,
        endpointId: endpoint.id,
        since: 0,
        max: 2,
      });
    expect(await recover()).toBe(2);
    expect(await recover()).toBe(2);
    expect(await recover()).toBe(1);
    expect(await recover()).toBe(0);
    const order = await db.sql<{ status: string }[]>`
      select status from holdfast_deliveries order by created_at`;
    expect(order.map((r) => r.status)).toEqual(['pending', 'pending', 'pending', 'pending', 'pending']);
    await expect(
      recoverDeliveries(fromPostgres(db.sql), {
        account: ACCOUNT,
        endpointId: endpoint.id,
        since: 0,
        max: 0,
      }),
    ).rejects.toThrow(RangeError);
  });
});
