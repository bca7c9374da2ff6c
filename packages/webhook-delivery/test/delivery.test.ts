import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type AttemptInfo,
  createDeliveryWorker,
  createEndpoint,
  enqueueEvent,
  getDelivery,
  listAttempts,
  migrations,
  purgeDeliveryHistory,
  replayDelivery,
  rotateSecret,
  toAttempt,
  toNotification,
  updateEndpoint,
} from '../src/index';
import { endPools, pgDb } from './fixtures/db';

afterAll(endPools);

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

async function receiver(respond: (n: number) => { status: number; body?: string; delayMs?: number }) {
  const received: Received[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const answer = respond(received.length);
      setTimeout(() => {
        inFlight -= 1;
        res.statusCode = answer.status;
        res.end(answer.body ?? '');
      }, answer.delayMs ?? 0);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    maxInFlight: () => maxInFlight,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let db: TestDatabase;
const ACCOUNT = 'acct_delivery';
const options = { allowPrivateDestinations: true };

beforeAll(async () => {
  db = await createTestDatabase();
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
});
afterAll(() => db.close());
beforeEach(async () => {
  await db.sql`truncate holdfast_webhook_endpoints, holdfast_events, holdfast_delivery_attempts, holdfast_resource_sequences, holdfast_notifications cascade`;
});

function worker(extra: Partial<Parameters<typeof createDeliveryWorker>[0]> = {}) {
  return createDeliveryWorker({
    db: pgDb(db),
    schedule: [0, 0],
    // Far above what a local receiver needs on a loaded machine; the timeout test sets its own.
    unsafeTimeoutMs: 5000,
    ...options,
    onError: () => {},
    ...extra,
  });
}

describe('webhook delivery', () => {
  it('delivers the exact event bytes, signed so standardwebhooks verifies them, once per subscribed endpoint', async () => {
    const hook = await receiver(() => ({ status: 204 }));
    const other = await receiver(() => ({ status: 204 }));
    const { secret } = await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: hook.url, eventTypes: ['subscription.created'] },
      options,
    );
    await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: other.url, eventTypes: ['order.refunded'] },
      options,
    );
    const event = await db.sql.begin((tx) =>
      enqueueEvent(fromPostgres(tx), {
        account: ACCOUNT,
        type: 'subscription.created',
        resourceId: 'sub_1',
        object: { id: 'sub_1', updatedAt: '2026-11-22T16:30:19.123Z' },
      }),
    );
    expect(await worker().runOnce()).toBe(1);
    expect(hook.received).toHaveLength(1);
    expect(other.received).toHaveLength(0);
    const [got] = hook.received;
    expect(got?.headers['webhook-id']).toBe(event.id);
    expect(got?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(got?.body ?? '')).toEqual(event);
    const verified = new Webhook(secret).verify(got?.body ?? '', {
      'webhook-id': String(got?.headers['webhook-id']),
      'webhook-timestamp': String(got?.headers['webhook-timestamp']),
      'webhook-signature': String(got?.headers['webhook-signature']),
    });
    expect(verified).toEqual(event);
    const [delivery] = await db.sql`select * from holdfast_deliveries`;
    expect(delivery?.status).toBe('succeeded');
    await hook.close();
    await other.close();
  });

  it('raises the sequence per resource, in the business transaction', async () => {
    const events = [];
    for (let i = 0; i < 3; i += 1) {
      events.push(
        await db.sql.begin((tx) =>
          enqueueEvent(fromPostgres(tx), {
            account: ACCOUNT,
            type: 'order.updated',
            resourceId: 'ord_1',
            object: {},
          }),
        ),
      );
    }
    const otherResource = await db.sql.begin((tx) =>
      enqueueEvent(fromPostgres(tx), {
        account: ACCOUNT,
        type: 'order.updated',
        resourceId: 'ord_2',
        object: {},
      }),
    );
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3]);
    expect(otherResource.sequence).toBe(1);
    await expect(
      db.sql.begin(async (tx) => {
        await enqueueEvent(fromPostgres(tx), {
          account: ACCOUNT,
          type: 'order.updated',
          resourceId: 'ord_1',
          object: {},
        });
        throw new Error('business write failed');
      }),
    ).rejects.toThrow();
    const [count] = await db.sql`select count(*)::int as n from holdfast_events where resource_id = 'ord_1'`;
    expect(count?.n).toBe(3);
  });

  it('retries 5xx on the schedule, logs every attempt, then dead; replay delivers with the same Webhook-Id', async () => {
    let healthy = false;
    // The worker's clock stands still but for the receiver, which moves it 10 ms per request it
    // has seen: the n-th attempt's latency is exactly 10n ms.
    let clock = 0;
    const hook = await receiver((n) => {
      clock += 10 * n;
      return healthy ? { status: 200, body: 'ok' } : { status: 503, body: 'x'.repeat(3000) };
    });
    await createEndpoint(fromPostgres(db.sql), { account: ACCOUNT, url: hook.url }, options);
    const event = await db.sql.begin((tx) =>
      enqueueEvent(fromPostgres(tx), {
        account: ACCOUNT,
        type: 'payment.succeeded',
        resourceId: 'pay_1',
        object: {},
      }),
    );
    clock = Date.now();
    const w = worker({ now: () => clock });
    for (let i = 0; i < 5; i += 1) await w.runOnce();
    expect(hook.received).toHaveLength(3); // schedule of two delays: three attempts
    const [delivery] = await db.sql`select * from holdfast_deliveries`;
    expect(delivery?.status).toBe('dead');
    const attempts = (await db.sql`select * from holdfast_delivery_attempts order by created_at`).map(
      toAttempt,
    );
    expect(attempts).toHaveLength(3);
    for (const attempt of attempts) {
      expect(attempt.status).toBe(503);
      expect(attempt.responseBodyPrefix).toHaveLength(1024);
    }
    expect(attempts.map((attempt) => attempt.latencyMs)).toEqual([10, 20, 30]);
    healthy = true;
    const replayed = await replayDelivery(
      fromPostgres(db.sql),
      { account: ACCOUNT, id: String(delivery?.id) },
      { now: () => clock },
    );
    expect(replayed?.status).toBe('pending');
    expect(
      await replayDelivery(fromPostgres(db.sql), { account: 'acct_other', id: String(delivery?.id) }),
    ).toBeUndefined();
    await w.runOnce();
    expect(hook.received).toHaveLength(4);
    expect(hook.received[3]?.headers['webhook-id']).toBe(event.id);
    const after = await getDelivery(fromPostgres(db.sql), { account: ACCOUNT, id: String(delivery?.id) });
    expect(after?.status).toBe('succeeded');
    expect(after?.attemptCount).toBe(4); // the total; the replay restarted only the schedule
    await hook.close();
  });

  it('gives a replayed delivery the whole retry schedule again', async () => {
    const hook = await receiver(() => ({ status: 500 }));
    await createEndpoint(fromPostgres(db.sql), { account: ACCOUNT, url: hook.url }, options);
    await db.sql.begin((tx) =>
      enqueueEvent(fromPostgres(tx), { account: ACCOUNT, type: 't.x', resourceId: 'r', object: {} }),
    );
    const w = worker();
    for (let i = 0; i < 4; i += 1) await w.runOnce();
    const [dead] = await db.sql`select id, status, attempt_count from holdfast_deliveries`;
    expect(dead).toMatchObject({ status: 'dead', attempt_count: 3 });
    await replayDelivery(fromPostgres(db.sql), { account: ACCOUNT, id: String(dead?.id) });
    for (let i = 0; i < 4; i += 1) await w.runOnce();
    const [again] = await db.sql`select status, attempt_count from holdfast_deliveries`;
    expect(again).toMatchObject({ status: 'dead', attempt_count: 6 });
    expect(hook.received).toHaveLength(6);
    await hook.close();
  });

  it('ends the delivery at once on a 4xx, and disables the endpoint with a notification on 410', async () => {
    const bad = await receiver(() => ({ status: 400 }));
    const gone = await receiver(() => ({ status: 410 }));
    await createEndpoint(fromPostgres(db.sql), { account: ACCOUNT, url: bad.url }, options);
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: gone.url },
      options,
    );
    await db.sql.begin((tx) =>
      enqueueEvent(fromPostgres(tx), { account: ACCOUNT, type: 't.x', resourceId: 'r', object: {} }),
    );
    const w = worker();
    await w.runOnce();
    await w.runOnce();
    expect(bad.received).toHaveLength(1);
    expect(gone.received).toHaveLength(1);
    const statuses = await db.sql`select status from holdfast_deliveries`;
    expect(statuses.map((r) => r.status)).toEqual(['dead', 'dead']);
    const [ep] = await db.sql`select status from holdfast_webhook_endpoints where id = ${endpoint.id}`;
    expect(ep?.status).toBe('disabled');
    const notes = (await db.sql`select * from holdfast_notifications`).map(toNotification);
    expect(notes).toEqual([
      expect.objectContaining({ type: 'webhook_endpoint.disabled', endpoint: endpoint.id }),
    ]);
    await bad.close();
    await gone.close();
  });

  it('never follows a redirect: the delivery is dead at once, its attempt listed, then purged after retention', async () => {
    const target = await receiver(() => ({ status: 204 }));
    const redirect = await receiver(() => ({ status: 302 }));
    await createEndpoint(fromPostgres(db.sql), { account: ACCOUNT, url: redirect.url }, options);
    await db.sql.begin((tx) =>
      enqueueEvent(
        fromPostgres(tx),
        {
          account: ACCOUNT,
          type: 't.x',
          resourceId: 'r',
          object: {},
        },
        { now: () => Date.now() - 40 * 86_400_000 },
      ),
    );
    await worker().runOnce();
    expect(redirect.received).toHaveLength(1);
    expect(target.received).toHaveLength(0);
    const [delivery] = await db.sql`select id, status from holdfast_deliveries`;
    expect(delivery?.status).toBe('dead');
    const attempts = await listAttempts(fromPostgres(db.sql), {
      account: ACCOUNT,
      id: String(delivery?.id),
    });
    expect(attempts).toEqual([expect.objectContaining({ status: 302, error: null })]);
    expect(
      await listAttempts(fromPostgres(db.sql), { account: 'acct_other', id: String(delivery?.id) }),
    ).toBeUndefined();
    // The attempt is recent, so only the 40-day-old finished event (and its delivery) goes: the
    // partitions of their day (the event's and the delivery's), whole.
    expect(await purgeDeliveryHistory(fromPostgres(db.sql), { batchSize: 1 })).toBe(2);
    expect(await db.sql`select id from holdfast_events`).toHaveLength(0);
    expect(await db.sql`select id from holdfast_deliveries`).toHaveLength(0);
    expect(await db.sql`select id from holdfast_delivery_attempts`).toHaveLength(1);
    expect(
      await purgeDeliveryHistory(fromPostgres(db.sql), { now: () => Date.now() + 40 * 86_400_000 }),
    ).toBeGreaterThan(0);
    expect(await db.sql`select id from holdfast_delivery_attempts`).toHaveLength(0);
    await target.close();
    await redirect.close();
  });

  it('times out slow receivers and retries them', async () => {
    const slow = await receiver(() => ({ status: 200, delayMs: 60_000 }));
    await createEndpoint(fromPostgres(db.sql), { account: ACCOUNT, url: slow.url }, options);
    await db.sql.begin((tx) =>
      enqueueEvent(fromPostgres(tx), { account: ACCOUNT, type: 't.x', resourceId: 'r', object: {} }),
    );
    await worker({ schedule: [60_000], unsafeTimeoutMs: 300 }).runOnce();
    const [attempt] = (await db.sql`select * from holdfast_delivery_attempts`).map(toAttempt);
    expect(attempt?.status).toBeNull();
    expect(attempt?.error).toMatch(/timeout/);
    const [delivery] = await db.sql`select status from holdfast_deliveries`;
    expect(delivery?.status).toBe('failed');
    await slow.close();
  });

  it('bounds in-flight attempts per endpoint', async () => {
    const slow = await receiver(() => ({ status: 200, delayMs: 100 }));
    await createEndpoint(fromPostgres(db.sql), { account: ACCOUNT, url: slow.url }, options);
    for (let i = 0; i < 6; i += 1) {
      await db.sql.begin((tx) =>
        enqueueEvent(fromPostgres(tx), { account: ACCOUNT, type: 't.x', resourceId: `r${i}`, object: {} }),
      );
    }
    const w = worker({ perEndpointConcurrency: 2 });
    for (let i = 0; i < 6 && slow.received.length < 6; i += 1) await w.runOnce();
    expect(slow.received).toHaveLength(6);
    expect(slow.maxInFlight()).toBeLessThanOrEqual(2);
    await slow.close();
  });

  it("lets one endpoint run at most three quarters of a worker's slots, so a slow one never holds up the others", async () => {
    // The slow receiver answers nothing while the test runs: every attempt to it stays in flight.
    const slow = await receiver(() => ({ status: 200, delayMs: 60_000 }));
    const fast = await receiver(() => ({ status: 204 }));
    await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: slow.url, eventTypes: ['t.slow'] },
      options,
    );
    await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: fast.url, eventTypes: ['t.fast'] },
      options,
    );
    for (let i = 0; i < 6; i += 1) {
      await db.sql.begin((tx) =>
        enqueueEvent(fromPostgres(tx), { account: ACCOUNT, type: 't.slow', resourceId: `s${i}`, object: {} }),
      );
    }
    const ended: AttemptInfo[] = [];
    const w = worker({
      concurrency: 4,
      perEndpointConcurrency: 4,
      pollMs: 20,
      unsafeTimeoutMs: 10_000,
      onAttempt: (info) => ended.push(info),
    });
    const waitFor = async (done: () => boolean) => {
      while (!done()) await new Promise((r) => setTimeout(r, 5));
    };
    w.start();
    await waitFor(() => slow.received.length >= 3);
    await db.sql.begin((tx) =>
      enqueueEvent(fromPostgres(tx), { account: ACCOUNT, type: 't.fast', resourceId: 'f', object: {} }),
    );
    await waitFor(() => fast.received.length === 1);
    // The fast endpoint was served while the slow one held three of the four slots, none answered.
    expect(ended.filter((a) => a.eventType === 't.slow')).toEqual([]);
    expect(slow.received).toHaveLength(3);
    expect(slow.maxInFlight()).toBe(3);
    await slow.close();
    await w.stop();
    await fast.close();
  });

  it('signs with both secrets for 24 h after a rotation', async () => {
    const hook = await receiver(() => ({ status: 200 }));
    const { endpoint, secret: old } = await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: hook.url },
      options,
    );
    const rotated = await rotateSecret(fromPostgres(db.sql), { account: ACCOUNT, id: endpoint.id });
    await db.sql.begin((tx) =>
      enqueueEvent(fromPostgres(tx), { account: ACCOUNT, type: 't.x', resourceId: 'r', object: {} }),
    );
    await worker().runOnce();
    const [got] = hook.received;
    const headers = {
      'webhook-id': String(got?.headers['webhook-id']),
      'webhook-timestamp': String(got?.headers['webhook-timestamp']),
      'webhook-signature': String(got?.headers['webhook-signature']),
    };
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(old).verify(got?.body ?? '', headers)).not.toThrow();
    expect(() => new Webhook(String(rotated?.secret)).verify(got?.body ?? '', headers)).not.toThrow();
    await hook.close();
  });

  it('warns a day ahead, then disables an endpoint failing for N days', async () => {
    let clock = Date.parse('2026-11-01T00:00:00.000Z');
    const hook = await receiver(() => ({ status: 500 }));
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: hook.url },
      options,
    );
    const w = worker({ now: () => clock, schedule: [0, 0, 0, 0, 0, 0, 0, 0], disableAfterDays: 2 });
    const fail = async () => {
      await db.sql.begin((tx) =>
        enqueueEvent(
          fromPostgres(tx),
          {
            account: ACCOUNT,
            type: 't.x',
            resourceId: `r${clock}`,
            object: {},
          },
          { now: () => clock },
        ),
      );
      await w.runOnce();
    };
    await fail(); // day 0: the streak starts
    clock += 86_400_000 + 1; // day 1: one day before the deadline
    await fail();
    let notes = (await db.sql`select * from holdfast_notifications order by created_at`).map(toNotification);
    expect(notes.map((n) => n.type)).toEqual(['webhook_endpoint.disabling']);
    expect(notes[0]?.disableAt).toBeTruthy();
    clock += 86_400_000; // day 2: deadline reached, warned 24 h ago
    await fail();
    notes = (await db.sql`select * from holdfast_notifications order by created_at`).map(toNotification);
    expect(notes.map((n) => n.type)).toEqual(['webhook_endpoint.disabling', 'webhook_endpoint.disabled']);
    const [ep] = await db.sql`select status from holdfast_webhook_endpoints where id = ${endpoint.id}`;
    expect(ep?.status).toBe('disabled');
    // Re-enabling starts the clock again.
    await updateEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, id: endpoint.id, status: 'active' },
      options,
    );
    const [again] =
      await db.sql`select failing_since from holdfast_webhook_endpoints where id = ${endpoint.id}`;
    expect(again?.failing_since).toBeNull();
    await hook.close();
  });

  it('refuses forbidden destinations at registration and when changed', async () => {
    await expect(
      createEndpoint(fromPostgres(db.sql), { account: ACCOUNT, url: 'http://127.0.0.1/x' }),
    ).rejects.toMatchObject({
      code: 'destination_url_forbidden',
      status: 422,
    });
    const { endpoint } = await createEndpoint(fromPostgres(db.sql), {
      account: ACCOUNT,
      url: 'https://93.184.216.34/x',
    });
    await expect(
      updateEndpoint(fromPostgres(db.sql), { account: ACCOUNT, id: endpoint.id, url: 'http://[::1]/' }),
    ).rejects.toMatchObject({ code: 'destination_url_forbidden' });
  });

  it('refuses a port other than 80, 443 or 1024-65535 at registration, on change and at every attempt', async () => {
    await expect(
      createEndpoint(fromPostgres(db.sql), { account: ACCOUNT, url: 'http://127.0.0.1:22/x' }, options),
    ).rejects.toMatchObject({
      code: 'destination_url_forbidden',
      detail: 'The destination URL is not allowed: only ports 80, 443 and 1024 to 65535 are allowed.',
    });
    const hook = await receiver(() => ({ status: 204 }));
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: hook.url },
      options,
    );
    await expect(
      updateEndpoint(
        fromPostgres(db.sql),
        { account: ACCOUNT, id: endpoint.id, url: 'https://93.184.216.34:0/' },
        options,
      ),
    ).rejects.toMatchObject({ code: 'destination_url_forbidden' });
    // A URL stored before the rule (or written behind the API's back) is refused when attempted.
    await db.sql`update holdfast_webhook_endpoints set url = 'http://127.0.0.1:1023/x' where id = ${endpoint.id}`;
    await db.sql.begin((tx) =>
      enqueueEvent(fromPostgres(tx), {
        account: ACCOUNT,
        type: 'order.created',
        resourceId: 'ord_port',
        object: {},
      }),
    );
    expect(await worker({ schedule: [] }).runOnce()).toBe(1);
    const [delivery] = await db.sql`select status, last_error from holdfast_deliveries`;
    expect(delivery?.status).toBe('dead');
    expect(delivery?.last_error).toBe(
      'destination forbidden: only ports 80, 443 and 1024 to 65535 are allowed',
    );
    expect(hook.received).toHaveLength(0);
    await hook.close();
  });
});
