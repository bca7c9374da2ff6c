import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Db } from '@holdfast/db';
import { fromPg } from '@holdfast/db/pg';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDeliveryWorker,
  createEndpoint,
  eventWrites,
  getDelivery,
  maintainDeliveryHistory,
  migrations,
  replayDelivery,
} from '../src/index';
import { endPools, pgPool } from './fixtures/db';

afterAll(endPools);

// The history maintenance runs beside everything else that touches the history tables: several
// workers leasing (the lease reads deliveries, then events), order writes fanning out through
// `eventWrites`, replays and reads. Whatever it has to do (partitions ahead, rows of the default
// partitions moved into partitions of their days, partitions dropped behind the retention) it
// takes its locks in the order the others do, so none of them is ever a deadlock's victim, and
// every delivery written is delivered exactly once (twice when replayed once).

const DAY = 86_400_000;
const ACCOUNT = 'acct_history_concurrency';
const PATHS = ['/a', '/b', '/c'];

let db: TestDatabase;
let sql: Db;
let base = '';
let close: () => Promise<void> = async () => {};
/** `<path> <webhook-id>` of every request received, and how often. */
const received = new Map<string, number>();
/** Told of every request, once it is counted in `received`. */
let onReceived = () => {};

const code = (error: unknown) =>
  typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';

describe.runIf(realPostgres)(
  'history maintenance beside leases, writes, replays and reads (PostgreSQL)',
  () => {
    beforeAll(async () => {
      db = await createTestDatabase();
      sql = fromPostgres(db.sql);
      for (const migration of migrations()) await db.sql.unsafe(migration.sql);
      await db.sql`create table orders (id text primary key)`;
      const server = createServer((req, res) => {
        const key = `${String(req.url)} ${String(req.headers['webhook-id'])}`;
        received.set(key, (received.get(key) ?? 0) + 1);
        onReceived();
        req.resume();
        req.on('end', () => res.writeHead(204).end());
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      close = () => new Promise((resolve) => server.close(() => resolve()));
    });
    afterAll(async () => {
      await close();
      await db.close();
    });

    it('never deadlocks with leases, fan-out writes, replays and reads, and loses or doubles no delivery, across moved clocks', {
      timeout: 240_000,
    }, async () => {
      const paths = new Map<string, string>();
      for (const path of PATHS) {
        const { endpoint } = await createEndpoint(
          sql,
          { account: ACCOUNT, url: `${base}${path}`, eventTypes: ['order.created'] },
          { allowPrivateDestinations: true },
        );
        paths.set(endpoint.id, path);
      }
      const errors: { who: string; code: string; message: string }[] = [];
      const failed = (who: string) => (error: unknown) => {
        errors.push({ who, code: code(error), message: String(error) });
      };
      /** `<path> <webhook-id>` of every delivery written or replayed, and how often it must arrive. */
      const expected = new Map<string, number>();
      const expect1 = (key: string) => expected.set(key, (expected.get(key) ?? 0) + 1);

      // The maintenance's clock walks a day a run; the orders are written two and a half days
      // ahead of it, past the partitions it makes ahead (two days), so every run finds rows in
      // the default partitions to move and partitions to make, and drops those behind its
      // three-day retention. The workers' clock is far enough ahead that every delivery is due,
      // and moves with real time, so no lease looks expired while its attempt runs.
      const start = Date.now();
      const clock = { maintenance: start };
      const writerNow = () => clock.maintenance + 2.5 * DAY;
      const workerNow = () => Date.now() + 60 * DAY;
      let writing = true;
      let working = true;
      // The end of the run, without a clock: the receiver has seen as many requests as were
      // written or replayed, or the workers find nothing left to deliver (every request an
      // outcome was written for arrived before it), so a lost delivery ends the run at once and
      // fails the comparison below. Both are looked at only once the writing has stopped.
      const total = () => [...expected.values()].reduce((a, b) => a + b, 0);
      const got = () => [...received.values()].reduce((a, b) => a + b, 0);
      let done = () => {};
      const finished = new Promise<void>((resolve) => {
        done = resolve;
      });
      const seenEverything = () => {
        if (!writing && got() >= total()) done();
      };
      onReceived = seenEverything;

      const workers = [0, 1, 2].map(() =>
        createDeliveryWorker({
          db: fromPg(pgPool(db, 3)),
          schedule: [DAY],
          allowPrivateDestinations: true,
          now: workerNow,
          onError: failed('worker'),
        }),
      );
      const working$ = workers.map(async (worker) => {
        while (working) {
          const n = await worker.runOnce().catch((error) => {
            failed('lease')(error);
            return 0;
          });
          if (n === 0) {
            if (!writing) {
              const [left] = await db.sql<{ n: number }[]>`
                select count(*)::int as n from holdfast_deliveries where status in ('pending', 'failed')`;
              if (left?.n === 0) done();
            }
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
        }
      });

      const writer = fromPg(pgPool(db, 2));
      let order = 0;
      const writing$ = [0, 1].map(async () => {
        while (writing) {
          const id = `ord_${order++}`;
          const event = eventWrites(
            { account: ACCOUNT, type: 'order.created', resourceId: id, object: { id } },
            { offset: 1, now: writerNow },
          );
          try {
            await writer.query(
              `with created as (insert into orders (id) values ($1::text)), ${event.ctes} select 1`,
              [id, ...event.values],
            );
            for (const path of PATHS) expect1(`${path} ${event.id}`);
          } catch (error) {
            failed('write')(error);
          }
        }
      });

      // Replays of delivered deliveries (each is sent once more) and reads of them.
      const other = fromPg(pgPool(db, 2));
      let replays = 0;
      const replaying$ = (async () => {
        while (writing) {
          try {
            const [row] = await other.query<{ id: string }>(
              "select id from holdfast_deliveries where status = 'succeeded' order by random() limit 1",
            );
            if (row) {
              const read = await getDelivery(other, { account: ACCOUNT, id: row.id });
              const replayed = await replayDelivery(
                other,
                { account: ACCOUNT, id: row.id },
                { now: workerNow },
              );
              if (replayed) {
                replays++;
                expect1(`${paths.get(replayed.endpoint)} ${replayed.event}`);
              }
              expect(read?.id ?? row.id).toBe(row.id);
            }
          } catch (error) {
            failed('replay')(error);
          }
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      })();

      const maintenance = fromPg(pgPool(db, 1));
      const created: string[] = [];
      const dropped: string[] = [];
      for (let i = 0; i < 24; i++) {
        try {
          const done = await maintainDeliveryHistory(maintenance, {
            now: () => clock.maintenance,
            retentionDays: 3,
            aheadDays: 2,
          });
          created.push(...done.created);
          dropped.push(...done.dropped);
        } catch (error) {
          failed('maintenance')(error);
        }
        clock.maintenance += DAY;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      writing = false;
      await Promise.all([...writing$, replaying$]);

      // The workers run until every delivery written has arrived, or none is left to send.
      seenEverything();
      await finished;
      working = false;
      await Promise.all(working$);
      await Promise.all(workers.map((worker) => worker.stop()));

      expect(errors.filter((error) => error.code === '40P01')).toEqual([]);
      expect(errors).toEqual([]);
      // The run did the work it is about: orders, replays, partitions made and dropped.
      expect(order).toBeGreaterThan(50);
      expect(replays).toBeGreaterThan(0);
      expect(created.length).toBeGreaterThan(0);
      expect(dropped.length).toBeGreaterThan(0);
      // Nothing lost, nothing doubled: each delivery arrived as often as it was written or replayed.
      const differences = [...new Set([...expected.keys(), ...received.keys()])].filter(
        (key) => expected.get(key) !== received.get(key),
      );
      expect(differences).toEqual([]);
      const [left] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from holdfast_deliveries where status in ('pending', 'failed')`;
      expect(left?.n).toBe(0);
    });

    it('a write of a day being attached waits for the attach and lands in the new partition, for every history table', async () => {
      // A write whose statement began before an attach committed would route its row on the
      // partitions it saw then: to the default, for a day the attach gives a partition. Here the
      // attach is held open (its transaction not yet committed) while a write of that day starts,
      // then committed: the write must not fail the default's new constraint.
      const day = (d: number) => new Date(Date.UTC(2040, 2, d)).toISOString();
      const at = (d: number) => new Date(Date.UTC(2040, 2, d, 12)).toISOString();
      const ymd = (d: number) => day(d).slice(0, 10).replaceAll('-', '');
      const { endpoint } = await createEndpoint(
        sql,
        { account: ACCOUNT, url: `${base}/attach` },
        { allowPrivateDestinations: true },
      );
      const writer = fromPg(pgPool(db, 1));
      const writes: Record<string, (d: number) => Promise<unknown>> = {
        holdfast_events: (d) =>
          writer.query(
            `insert into holdfast_events (id, account_id, type, resource_id, sequence, payload, created_at)
             values ($1, $2, 'order.created', 'ord_attach', 1, '{}', $3)`,
            [`evt_attach_${d}`, ACCOUNT, at(d)],
          ),
        holdfast_deliveries: (d) =>
          writer.query(
            `insert into holdfast_deliveries (id, account_id, event_id, endpoint_id, event_type, status, created_at, updated_at)
             values ($1, $2, $3, $4, 'order.created', 'succeeded', $5, $5)`,
            [`dlv_attach_${d}`, ACCOUNT, `evt_attach_${d}`, endpoint.id, at(d)],
          ),
        holdfast_delivery_attempts: (d) =>
          writer.query(
            `insert into holdfast_delivery_attempts (id, delivery_id, account_id, endpoint_id, status, latency_ms, created_at)
             values ($1, $2, $3, $4, 204, 1, $5)`,
            [`att_attach_${d}`, `dlv_attach_${d}`, ACCOUNT, endpoint.id, at(d)],
          ),
      };
      let d = 1;
      for (const [table, write] of Object.entries(writes)) {
        // Day d has its partition (the maintenance's own day), so only the two after it are
        // missing, and the attach below makes them.
        await db.sql`select holdfast_history_ensure(${table}, ${day(d)}, ${day(d + 1)}, 1)`;
        let attached = () => {};
        const open = new Promise<void>((resolve) => {
          attached = resolve;
        });
        let commit = () => {};
        const held = new Promise<void>((resolve) => {
          commit = resolve;
        });
        const attach = db.sql.begin(async (tx) => {
          const made = await tx<{ p: string }[]>`
            select holdfast_history_ensure(${table}, ${day(d)}, ${day(d + 3)}, 1) as p`;
          expect(made).toHaveLength(2);
          attached();
          await held;
        });
        await open;
        const written = write(d + 2).then(
          () => 'written',
          (error: unknown) => `${code(error)} ${String(error)}`,
        );
        // The write is waiting for a lock the attach holds (on the table, or on its default).
        for (let i = 0; i < 500; i++) {
          const [waiting] = await db.sql<{ n: number }[]>`
            select count(*)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid
            where not l.granted and a.query like 'insert into holdfast_%'`;
          if ((waiting?.n ?? 0) > 0) break;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        commit();
        await attach;
        expect(await written).toBe('written');
        const [home] = await db.sql.unsafe<{ relation: string }[]>(
          `select tableoid::regclass::text as relation from ${table} where created_at = $1`,
          [at(d + 2)],
        );
        expect(home?.relation).toBe(`${table}_p${ymd(d + 2)}`);
        d += 10;
      }
    });

    it('takes no lock a reader or writer holds when the partitions ahead exist and the defaults are empty; gives up busy when it must wait', async () => {
      const now = () => Date.parse('2035-01-10T12:00:00.000Z');
      const first = await maintainDeliveryHistory(sql, { now, retentionDays: 30, aheadDays: 3 });
      expect(first.busy).toBe(false);
      // Another transaction writes to every history table, its default partitions and the
      // endpoints, and stays open: whatever the maintenance would lock beyond a read waits for it.
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked = () => {};
      const ready = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const holder = db.sql.begin(async (tx) => {
        await tx.unsafe(`lock table only holdfast_webhook_endpoints, holdfast_events, holdfast_deliveries,
        holdfast_delivery_attempts, holdfast_events_default, holdfast_deliveries_default,
        holdfast_delivery_attempts_default in row exclusive mode`);
        locked();
        await held;
      });
      await ready;
      try {
        // Nothing to make: done without waiting for it.
        expect(await maintainDeliveryHistory(sql, { now, retentionDays: 30, aheadDays: 3 })).toEqual({
          created: [],
          dropped: [],
          kept: [],
          busy: false,
        });
        // Two more days ahead to make: it gives up rather than wait, and says so.
        expect(await maintainDeliveryHistory(sql, { now, retentionDays: 30, aheadDays: 5 })).toEqual({
          created: [],
          dropped: [],
          kept: [],
          busy: true,
        });
      } finally {
        release();
        await holder;
      }
      const later = await maintainDeliveryHistory(sql, { now, retentionDays: 30, aheadDays: 5 });
      expect(later.busy).toBe(false);
      expect(later.created).toHaveLength(3 * 2);
    });
  },
);
