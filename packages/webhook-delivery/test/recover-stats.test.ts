import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import {
  createDeliveryWorker,
  createEndpoint,
  endpointStats,
  enqueueEvent,
  migrations,
  recoverDeliveries,
  updateEndpoint,
} from '../src/index';
import { endPools, pgDb } from './fixtures/db';

afterAll(endPools);

// CONTRACT section 10: bulk recovery re-queues an endpoint's dead and failed deliveries created
// in a range (disabled endpoints get them once enabled again), and per-endpoint stats bucket the
// attempts by hour or day with outcome counts and latency percentiles.

const ACCOUNT = 'acct_recover';
let db: TestDatabase;
let status = 500;
const ids: string[] = [];
let url = '';
let close: () => Promise<void> = async () => {};
const clock = { now: Date.parse('2026-11-20T10:15:00.000Z') };

beforeAll(async () => {
  db = await createTestDatabase();
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
  const server = createServer((req, res) => {
    ids.push(String(req.headers['webhook-id']));
    req.resume();
    req.on('end', () => res.writeHead(status).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  close = () => new Promise((resolve) => server.close(() => resolve()));
});
afterAll(async () => {
  await close();
  await db.close();
});
beforeEach(async () => {
  await db.sql`truncate holdfast_webhook_endpoints, holdfast_events, holdfast_delivery_attempts, holdfast_resource_sequences, holdfast_notifications cascade`;
  ids.length = 0;
  status = 500;
});

const worker = () =>
  createDeliveryWorker({
    db: pgDb(db),
    schedule: [0],
    unsafeTimeoutMs: 5000,
    allowPrivateDestinations: true,
    now: () => clock.now,
    onError: () => {},
  });

async function drain(): Promise<void> {
  const w = worker();
  while ((await w.runOnce()) > 0) {}
  await w.stop();
}

async function emit(n: number, at: number): Promise<void> {
  await enqueueEvent(
    fromPostgres(db.sql),
    {
      account: ACCOUNT,
      type: 'order.created',
      resourceId: `ord_${n}`,
      object: { n },
    },
    { now: () => at },
  );
}

const statuses = async () =>
  (await db.sql<{ status: string }[]>`select status from holdfast_deliveries order by created_at`).map(
    (r) => r.status,
  );

it('re-queues the dead and failed deliveries of the range only, keeps their Webhook-Id, and they are sent', async () => {
  const { endpoint } = await createEndpoint(
    fromPostgres(db.sql),
    { account: ACCOUNT, url },
    { allowPrivateDestinations: true },
  );
  const base = clock.now;
  for (let i = 0; i < 4; i++) await emit(i, base + i * 60_000);
  clock.now = base + 10 * 60_000;
  await drain();
  expect(await statuses()).toEqual(['dead', 'dead', 'dead', 'dead']);
  const deadIds = new Set(ids);
  // The first delivery is outside the range.
  const recovered = await recoverDeliveries(
    fromPostgres(db.sql),
    {
      account: ACCOUNT,
      endpointId: endpoint.id,
      since: base + 60_000,
    },
    { now: () => clock.now },
  );
  expect(recovered).toBe(3);
  expect(await statuses()).toEqual(['dead', 'pending', 'pending', 'pending']);
  status = 200;
  ids.length = 0;
  await drain();
  expect(await statuses()).toEqual(['dead', 'succeeded', 'succeeded', 'succeeded']);
  expect(ids).toHaveLength(3);
  for (const id of ids) expect(deadIds.has(id)).toBe(true);
  // `until` bounds the range; another account or an unknown endpoint is undefined.
  expect(
    await recoverDeliveries(fromPostgres(db.sql), {
      account: ACCOUNT,
      endpointId: endpoint.id,
      since: base,
      until: base + 1,
    }),
  ).toBe(1);
  expect(
    await recoverDeliveries(fromPostgres(db.sql), {
      account: 'acct_other',
      endpointId: endpoint.id,
      since: base,
    }),
  ).toBeUndefined();
  expect(
    await recoverDeliveries(fromPostgres(db.sql), { account: ACCOUNT, endpointId: 'we_nope', since: base }),
  ).toBeUndefined();
});

it('what fell due while the endpoint was disabled is sent once it is enabled again', async () => {
  const { endpoint } = await createEndpoint(
    fromPostgres(db.sql),
    { account: ACCOUNT, url },
    { allowPrivateDestinations: true },
  );
  await emit(1, clock.now);
  await updateEndpoint(fromPostgres(db.sql), { account: ACCOUNT, id: endpoint.id, status: 'disabled' });
  status = 200;
  await drain();
  expect(ids).toEqual([]);
  expect(await statuses()).toEqual(['pending']);
  await updateEndpoint(fromPostgres(db.sql), { account: ACCOUNT, id: endpoint.id, status: 'active' });
  await drain();
  expect(ids).toHaveLength(1);
  expect(await statuses()).toEqual(['succeeded']);
});

it('buckets attempts by hour (24h) and by day (7d), with outcome counts and p50/p95 latency', async () => {
  const { endpoint } = await createEndpoint(
    fromPostgres(db.sql),
    { account: ACCOUNT, url },
    { allowPrivateDestinations: true },
  );
  const start = Date.parse('2026-11-20T08:05:00.000Z');
  // 08:xx: two deliveries fail twice each (failed, then dead); 09:xx: three succeed.
  clock.now = start;
  status = 500;
  await emit(1, clock.now);
  await emit(2, clock.now);
  await drain();
  clock.now = start + 3_600_000;
  status = 200;
  for (let i = 3; i < 6; i++) await emit(i, clock.now);
  await drain();
  // Known latencies written into the attempt log, so the percentiles are exact (PostgreSQL's
  // percentile_cont: interpolated between the two nearest of the sorted latencies, rounded).
  const attempts = await db.sql<{ id: string; hour: number }[]>`
    select id, extract(hour from created_at at time zone 'UTC')::int as hour from holdfast_delivery_attempts
    where endpoint_id = ${endpoint.id} order by created_at, id`;
  const latencies = new Map([
    [8, [400, 100, 300, 200]],
    [9, [30, 10, 20]],
  ]);
  for (const attempt of attempts) {
    const ms = latencies.get(attempt.hour)?.shift();
    if (ms === undefined) throw new Error(`an attempt at ${attempt.hour}:xx not planned for`);
    await db.sql`update holdfast_delivery_attempts set latency_ms = ${ms} where id = ${attempt.id}`;
  }
  expect([...latencies.values()].flat()).toEqual([]);
  const now = start + 2 * 3_600_000; // 10:05
  const stats = (window: '24h' | '7d') =>
    endpointStats(
      fromPostgres(db.sql),
      { account: ACCOUNT, endpointId: endpoint.id, window },
      { now: () => now },
    );
  const day = await stats('24h');
  expect(day?.buckets).toHaveLength(24);
  expect(day?.to).toBe('2026-11-20T11:00:00.000Z');
  expect(day?.from).toBe('2026-11-19T11:00:00.000Z');
  const at = (iso: string) => day?.buckets.find((b) => b.start === iso);
  // 100, 200, 300, 400: p50 between 200 and 300; p95 at 85% of the way from 300 to 400.
  expect(at('2026-11-20T08:00:00.000Z')).toMatchObject({
    succeeded: 0,
    failed: 2,
    dead: 2,
    p50LatencyMs: 250,
    p95LatencyMs: 385,
  });
  // 10, 20, 30: p50 20; p95 at 90% of the way from 20 to 30.
  expect(at('2026-11-20T09:00:00.000Z')).toMatchObject({
    succeeded: 3,
    failed: 0,
    dead: 0,
    p50LatencyMs: 20,
    p95LatencyMs: 29,
  });
  expect(at('2026-11-20T10:00:00.000Z')).toMatchObject({
    succeeded: 0,
    failed: 0,
    dead: 0,
    p50LatencyMs: null,
    p95LatencyMs: null,
  });
  const total = (day?.buckets ?? []).reduce((sum, b) => sum + b.succeeded + b.failed + b.dead, 0);
  expect(total).toBe(7);
  const week = await stats('7d');
  expect(week?.buckets).toHaveLength(7);
  expect(week?.bucketSize).toBe('day');
  // All seven: 10, 20, 30, 100, 200, 300, 400: p50 100; p95 at 70% of the way from 300 to 400.
  expect(week?.buckets.at(-1)).toMatchObject({
    start: '2026-11-20T00:00:00.000Z',
    succeeded: 3,
    failed: 2,
    dead: 2,
    p50LatencyMs: 100,
    p95LatencyMs: 370,
  });
  expect(
    await endpointStats(fromPostgres(db.sql), {
      account: 'acct_other',
      endpointId: endpoint.id,
      window: '24h',
    }),
  ).toBeUndefined();
});

it('recovers and counts only the event types asked for, when asked', async () => {
  const { endpoint } = await createEndpoint(
    fromPostgres(db.sql),
    { account: ACCOUNT, url },
    { allowPrivateDestinations: true },
  );
  const base = clock.now;
  await emit(1, base);
  await enqueueEvent(
    fromPostgres(db.sql),
    {
      account: ACCOUNT,
      type: 'payment.succeeded',
      resourceId: 'pay_1',
      object: { n: 2 },
    },
    { now: () => base },
  );
  await drain();
  expect(await statuses()).toEqual(['dead', 'dead']);
  const stats = (eventTypes?: readonly string[]) =>
    endpointStats(
      fromPostgres(db.sql),
      {
        account: ACCOUNT,
        endpointId: endpoint.id,
        window: '24h',
        eventTypes,
      },
      { now: () => base },
    );
  const attempts = async (eventTypes?: readonly string[]) =>
    ((await stats(eventTypes))?.buckets ?? []).reduce((sum, b) => sum + b.succeeded + b.failed + b.dead, 0);
  // Two attempts each (schedule [0]: one retry).
  expect(await attempts()).toBe(4);
  expect(await attempts(['order.created'])).toBe(2);
  expect(await attempts([])).toBe(0);

  const recover = (eventTypes?: readonly string[]) =>
    recoverDeliveries(fromPostgres(db.sql), {
      account: ACCOUNT,
      endpointId: endpoint.id,
      since: base,
      until: base + 1,
      eventTypes,
    });
  expect(await recover([])).toBe(0);
  expect(await recover(['order.created'])).toBe(1);
  const byType = await db.sql<{ event_type: string; status: string }[]>`
    select event_type, status from holdfast_deliveries order by event_type`;
  expect(byType.map((row) => [row.event_type, row.status])).toEqual([
    ['order.created', 'pending'],
    ['payment.succeeded', 'dead'],
  ]);
  expect(await recover()).toBe(1);
});
