import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Db } from '@holdfast/db';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createDeliveryWorker,
  createEndpoint,
  deliveryHistoryPartitions,
  endpointStats,
  enqueueEvent,
  getDelivery,
  getEvent,
  listAttempts,
  maintainDeliveryHistory,
  migrations,
} from '../src/index';
import { endPools, pgDb } from './fixtures/db';

afterAll(endPools);

// History lives in time partitions, dropped whole behind the retention: never a DELETE of a row,
// never a partition an unfinished delivery (or its event, or its attempts) still needs.

const DAY = 86_400_000;
const ACCOUNT = 'acct_history';
const HISTORY = ['holdfast_events', 'holdfast_deliveries', 'holdfast_delivery_attempts'];
let db: TestDatabase;
let sql: Db;
const statuses = new Map<string, number>();
const received: string[] = [];
let base = '';
let close: () => Promise<void> = async () => {};
const clock = { now: 0 };

const day = (ms: number) =>
  new Date(Math.floor(ms / DAY) * DAY).toISOString().slice(0, 10).replaceAll('-', '');

describe.runIf(realPostgres)('history in time partitions (PostgreSQL)', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
    sql = fromPostgres(db.sql);
    for (const migration of migrations()) await db.sql.unsafe(migration.sql);
    // Every row deleted from a history table (any partition, now or later) is written down here.
    await db.sql.unsafe(`
      create table history_deletes (tbl text not null, id text not null);
      create function history_deleted() returns trigger language plpgsql as $fn$
      begin
        insert into history_deletes values (tg_table_name, old.id);
        return null;
      end $fn$;
      ${HISTORY.map((t) => `create trigger ${t}_deleted after delete on ${t} for each row execute function history_deleted();`).join('\n')}
    `);
    const server = createServer((req, res) => {
      const path = String(req.url);
      received.push(`${path} ${String(req.headers['webhook-id'])}`);
      req.resume();
      req.on('end', () => res.writeHead(statuses.get(path) ?? 204).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  });
  afterAll(async () => {
    await close();
    await db.close();
  });
  beforeEach(async () => {
    await db.sql`truncate holdfast_webhook_endpoints, holdfast_events, holdfast_delivery_attempts, holdfast_resource_sequences cascade`;
    statuses.clear();
    received.length = 0;
  });

  const worker = (schedule: number[]) =>
    createDeliveryWorker({
      db: pgDb(db),
      schedule,
      unsafeTimeoutMs: 5000,
      allowPrivateDestinations: true,
      now: () => clock.now,
      // A long-failing endpoint stays enabled: the tests park work on purpose.
      disableAfterDays: 1000,
      onError: () => {},
    });
  const endpoint = async (path: string, eventTypes = ['t.x']) =>
    (
      await createEndpoint(
        sql,
        { account: ACCOUNT, url: `${base}${path}`, eventTypes },
        { allowPrivateDestinations: true },
      )
    ).endpoint.id;
  const enqueue = (resourceId: string, type = 't.x') =>
    db.sql.begin((tx) =>
      enqueueEvent(
        fromPostgres(tx),
        { account: ACCOUNT, type, resourceId, object: {} },
        { now: () => clock.now },
      ),
    );
  const partitions = async (table: string) =>
    (await deliveryHistoryPartitions(sql))
      .filter((p) => p.table === table && p.fromMs !== null)
      .map((p) => p.partition);
  const rows = async (table: string) => (await db.sql.unsafe(`select id from ${table}`)).length;

  it('keeps 40 simulated days within a 7-day retention by dropping whole partitions, never a row, keeping every unfinished delivery', {
    timeout: 180_000,
  }, async () => {
    clock.now = Date.parse('2031-03-01T10:00:00.000Z');
    const start = clock.now;
    await endpoint('/ok');
    const parked = await endpoint('/parked', ['t.park']);
    await endpoint('/failing', ['t.fail']);
    statuses.set('/failing', 500);
    // Retries about 20 days apart (the schedule's jitter is a tenth either way): the failing
    // endpoint's delivery stays unfinished across the run.
    const w = worker([20 * DAY, 20 * DAY]);
    const unfinished: { id: string; event: string }[] = [];
    for (let i = 0; i < 40; i++) {
      const done = await maintainDeliveryHistory(sql, {
        now: () => clock.now,
        retentionDays: 7,
        aheadDays: 3,
      });
      expect(done.kept.filter((k) => k.reason === 'busy')).toEqual([]);
      await enqueue(`r_${i}`);
      if (i === 2 || i === 3) {
        // Day 2: a delivery to the parked endpoint, disabled at once, so it stays pending; day
        // 3: one to the failing endpoint (failed, retrying).
        const event = await enqueue(`r_${i}_more`, i === 2 ? 't.park' : 't.fail');
        const [row] = await db.sql<
          { id: string }[]
        >`select id from holdfast_deliveries where event_id = ${event.id}`;
        unfinished.push({ id: String(row?.id), event: event.id });
        if (i === 2)
          await db.sql`update holdfast_webhook_endpoints set status = 'disabled' where id = ${parked}`;
      }
      while ((await w.runOnce()) > 0);
      clock.now += DAY;
    }
    await w.stop();
    const done = await maintainDeliveryHistory(sql, { now: () => clock.now, retentionDays: 7, aheadDays: 3 });

    // Not one row deleted from the history, whatever partition it was in.
    expect(await db.sql`select * from history_deletes`).toEqual([]);

    // The partitions: the retention's days and the ahead days, plus the days of the unfinished
    // deliveries (their deliveries, their events) and of the failing one's attempts.
    const window = Array.from({ length: 11 }, (_, k) => `_p${day(clock.now - 7 * DAY + k * DAY)}`);
    const kept = [`_p${day(start + 2 * DAY)}`, `_p${day(start + 3 * DAY)}`];
    expect(await partitions('holdfast_events')).toEqual(
      [...kept, ...window].map((s) => `holdfast_events${s}`),
    );
    expect(await partitions('holdfast_deliveries')).toEqual(
      [...kept, ...window].map((s) => `holdfast_deliveries${s}`),
    );
    // The failing delivery's attempts: day 3 and its retry about 20 days later, the rest in the window.
    const [, failingDelivery] = unfinished;
    const retried = (await listAttempts(sql, { account: ACCOUNT, id: String(failingDelivery?.id) })) ?? [];
    const attemptDays = retried.map((a) => `holdfast_delivery_attempts_p${day(Date.parse(a.createdAt))}`);
    expect(attemptDays).toHaveLength(2);
    expect(attemptDays[0]).toBe(`holdfast_delivery_attempts_p${day(start + 3 * DAY)}`);
    expect(await partitions('holdfast_delivery_attempts')).toEqual([
      ...attemptDays,
      ...window.map((s) => `holdfast_delivery_attempts${s}`),
    ]);
    expect(done.kept.map((k) => k.partition).sort()).toEqual(
      [
        ...kept.map((s) => `holdfast_events${s}`),
        ...kept.map((s) => `holdfast_deliveries${s}`),
        ...attemptDays,
      ].sort(),
    );

    // Every unfinished delivery is there, with its event and its whole attempt log.
    const [parkedDelivery] = unfinished;
    expect(await getDelivery(sql, { account: ACCOUNT, id: String(parkedDelivery?.id) })).toMatchObject({
      status: 'pending',
      attemptCount: 0,
    });
    expect(await getDelivery(sql, { account: ACCOUNT, id: String(failingDelivery?.id) })).toMatchObject({
      status: 'failed',
      attemptCount: 2,
    });
    expect(await getEvent(sql, { account: ACCOUNT, id: String(parkedDelivery?.event) })).toBeDefined();
    expect(await getEvent(sql, { account: ACCOUNT, id: String(failingDelivery?.event) })).toBeDefined();
    expect(await listAttempts(sql, { account: ACCOUNT, id: String(failingDelivery?.id) })).toHaveLength(2);
    // The two unfinished days hold all their rows (two deliveries each), the window its seven
    // days of one each.
    expect(await rows('holdfast_deliveries')).toBe(2 * 2 + 7);

    // Finished at last, they go on the next run, with their events and attempts.
    statuses.delete('/failing');
    await db.sql`update holdfast_webhook_endpoints set status = 'active' where id = ${parked}`;
    clock.now += 10 * DAY;
    const last = worker([20 * DAY, 20 * DAY]);
    while ((await last.runOnce()) > 0);
    await last.stop();
    expect(await getDelivery(sql, { account: ACCOUNT, id: String(failingDelivery?.id) })).toMatchObject({
      status: 'succeeded',
    });
    const after = await maintainDeliveryHistory(sql, {
      now: () => clock.now,
      retentionDays: 7,
      aheadDays: 3,
    });
    expect(after.kept).toEqual([]);
    expect(after.dropped).toEqual(
      expect.arrayContaining([
        ...kept.map((s) => `holdfast_events${s}`),
        ...kept.map((s) => `holdfast_deliveries${s}`),
        ...attemptDays,
      ]),
    );
    expect(await getDelivery(sql, { account: ACCOUNT, id: String(failingDelivery?.id) })).toBeUndefined();
    expect(await db.sql`select * from history_deletes`).toEqual([]);
  });

  it('delivers exactly once a delivery that retries over several days while its partition falls behind the retention', {
    timeout: 60_000,
  }, async () => {
    clock.now = Date.parse('2032-06-10T23:30:00.000Z');
    const start = clock.now;
    const id = await endpoint('/flaky');
    statuses.set('/flaky', 503);
    const w = worker([DAY, DAY, DAY, DAY]);
    const event = await enqueue('r_flaky');
    const [{ id: deliveryId } = { id: '' }] = await db.sql<{ id: string }[]>`
      select id from holdfast_deliveries where event_id = ${event.id}`;
    for (let i = 0; i < 3; i++) {
      await maintainDeliveryHistory(sql, { now: () => clock.now, retentionDays: 1, aheadDays: 1 });
      while ((await w.runOnce()) > 0);
      // Past the retry's jitter (a tenth of its day either way), a day boundary each time.
      clock.now += 1.2 * DAY;
    }
    // Three failed attempts on three days; its own day is behind the retention, and kept.
    expect(await partitions('holdfast_deliveries')).toContain(`holdfast_deliveries_p${day(start)}`);
    statuses.delete('/flaky');
    await maintainDeliveryHistory(sql, { now: () => clock.now, retentionDays: 1, aheadDays: 1 });
    while ((await w.runOnce()) > 0);
    clock.now += DAY;
    while ((await w.runOnce()) > 0);
    await w.stop();
    const flaky = received.filter((line) => line.startsWith('/flaky '));
    expect(flaky).toEqual(Array.from({ length: 4 }, () => `/flaky ${event.id}`));
    const delivery = await getDelivery(sql, { account: ACCOUNT, id: deliveryId });
    expect(delivery).toMatchObject({ status: 'succeeded', attemptCount: 4 });
    expect((await listAttempts(sql, { account: ACCOUNT, id: deliveryId }))?.map((a) => a.status)).toEqual([
      503, 503, 503, 204,
    ]);
    const stats = await endpointStats(
      sql,
      { account: ACCOUNT, endpointId: id, window: '7d' },
      { now: () => clock.now },
    );
    expect(stats?.buckets.reduce((n, b) => n + b.succeeded, 0)).toBe(1);
    // Finished, its day goes on the next run.
    await maintainDeliveryHistory(sql, { now: () => clock.now, retentionDays: 1, aheadDays: 1 });
    expect(await partitions('holdfast_deliveries')).not.toContain(`holdfast_deliveries_p${day(start)}`);
    expect(await db.sql`select * from history_deletes`).toEqual([]);
  });

  it('finds one delivery in its own partition by its id', async () => {
    clock.now = Date.parse('2033-01-05T08:00:00.000Z');
    await endpoint('/ok');
    await maintainDeliveryHistory(sql, { now: () => clock.now });
    await enqueue('r_plan');
    const [{ id } = { id: '' }] = await db.sql<{ id: string }[]>`select id from holdfast_deliveries`;
    const [plan] = await db.sql<{ 'QUERY PLAN': string }[]>`
      explain (format json) select * from holdfast_deliveries d
      where d.id = ${id} and d.created_at >= coalesce(holdfast_delivery_created_at(${id}), '-infinity')
        and d.created_at <= coalesce(holdfast_delivery_created_at(${id}), 'infinity')`;
    const text = JSON.stringify(plan);
    expect(text).toContain(`holdfast_deliveries_p${day(clock.now)}`);
    expect(text).not.toContain('holdfast_deliveries_default');
    expect(await getDelivery(sql, { account: ACCOUNT, id })).toMatchObject({ id });
  });
});
