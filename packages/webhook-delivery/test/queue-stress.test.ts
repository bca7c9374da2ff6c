import type { Db } from '@holdfast/db';
import { fromPg } from '@holdfast/db/pg';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoint, enqueueEvent, migrations, recoverDeliveries, replayDelivery } from '../src/index';
import { type LeasedRow, leaseDue, reconcileInFlight, releaseLease, renewLeases } from '../src/lease';
import { type AttemptResult, writeOutcomes } from '../src/outcomes';
import { workerStatements } from '../src/sql/worker';
import { endPools, pgPool } from './fixtures/db';

afterAll(endPools);

// Everything that writes the queue at once, on many connections: transactions of several events
// fanned out to endpoints every event shares, workers leasing (each round moves turns), writing
// outcomes (retries due at once), giving leases back and renewing them, replays, recovery and
// the repair that moves turns later. Writers' clocks run a little behind the workers', so a
// writer often finds a turn a round moved past its delivery, the case that used to make two
// writers wait for each other. Counted, never timed: no deadlock (40P01) anywhere, even one a
// statement would retry, nothing leased to two workers at once, and once drained every
// delivery of every event exists once and succeeded, each no more often than it was sent anew.

const ACCOUNTS = ['acct_stress_a', 'acct_stress_b'];
const ENDPOINTS_PER_ACCOUNT = 4;
const WRITERS = 8;
const TXS_PER_WRITER = 20;
const EVENTS_PER_TX = 3;
const WORKERS = 3;
const REPLAYS = 120;
const RECOVERS = 40;
const REPAIRS = 40;
const MAX_ROUNDS = 20_000;

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
});
afterAll(() => db?.close());

const codeOf = (error: unknown): unknown =>
  typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;

describe.skipIf(!realPostgres)(
  'the queue under concurrent writers, leases, outcomes, replays and recovery',
  () => {
    it('never deadlocks, never leases one delivery to two workers at once, and loses or doubles nothing', async () => {
      const pool = pgPool(db, 24);
      const errors: unknown[] = [];
      let deadlocks = 0;
      /** A Db that counts every deadlock a statement meets, also those the caller retries. */
      const counting = (inner: Db): Db => ({
        async query<Row>(text: string, values?: readonly unknown[]) {
          try {
            return await inner.query<Row>(text, values);
          } catch (error) {
            if (codeOf(error) === '40P01') deadlocks += 1;
            throw error;
          }
        },
      });
      const poolDb = counting(fromPg(pool));
      const queue = { db: poolDb, sql: workerStatements() };

      const endpoints: { account: string; id: string }[] = [];
      for (const account of ACCOUNTS) {
        for (let i = 0; i < ENDPOINTS_PER_ACCOUNT; i += 1) {
          const { endpoint } = await createEndpoint(
            poolDb,
            { account, url: `http://127.0.0.1:1024/hook/${i}` },
            { allowPrivateDestinations: true, concurrencyMax: 8, concurrencyInitial: 8 },
          );
          endpoints.push({ account, id: endpoint.id });
        }
      }

      let writing = WRITERS;
      let side = 3;
      const replayed = new Map<string, number>();
      let random = 0x2545f491;
      const next = () => {
        random = (random * 1103515245 + 12345) & 0x7fffffff;
        return random / 0x7fffffff;
      };

      const writer = async (w: number) => {
        for (let t = 0; t < TXS_PER_WRITER; t += 1) {
          const client = await pool.connect();
          try {
            await client.query('begin');
            const tx = counting(fromPg(client));
            const base = Date.now() - Math.floor(next() * 50);
            // Resources in one order in every transaction (each event locks its resource's sequence
            // row until commit: two transactions taking two resources in opposite orders would
            // wait for each other whatever the queue does).
            for (let e = 0; e < EVENTS_PER_TX; e += 1) {
              const account = ACCOUNTS[(w + t + e) % ACCOUNTS.length] as string;
              await enqueueEvent(
                tx,
                {
                  account,
                  type: 'order.created',
                  resourceId: `ord_${e}_${(w + t) % 3}`,
                  object: { w, t, e },
                },
                // Behind the workers' clock, each event of a transaction further behind than the one
                // before it (clocks of processes differ): rounds have often moved a turn past a
                // later event's time after its transaction's first event found the turn come.
                { now: () => base - e * 25 },
              );
            }
            await client.query('commit');
          } catch (error) {
            await client.query('rollback').catch(() => {});
            errors.push(error);
          } finally {
            client.release();
          }
        }
        writing -= 1;
      };

      /** Deliveries held by a worker of this test now: id → owner. */
      const held = new Map<string, string>();
      let doubles = 0;
      const worker = async (k: number) => {
        const owner = `wrk_stress_${k}`;
        for (let round = 0; round < MAX_ROUNDS; round += 1) {
          const draining = writing === 0 && side === 0;
          let rows: LeasedRow[] = [];
          try {
            rows = await leaseDue(queue, {
              owner,
              limit: 16,
              perEndpoint: 8,
              at: new Date(),
              leaseMs: 60_000,
              paused: [],
              endpointShare: 8,
              running: new Map(),
            });
          } catch (error) {
            errors.push(error);
          }
          for (const row of rows) {
            if (held.has(row.id)) doubles += 1;
            held.set(row.id, owner);
          }
          if (rows.length === 0) {
            if (draining) {
              const [left] = await db.sql<{ n: number }[]>`
              select count(*)::int as n from holdfast_delivery_queue`;
              if (left?.n === 0) return;
            }
            await new Promise((resolve) => setTimeout(resolve, 5));
            continue;
          }
          try {
            if (!draining && next() < 0.3) {
              await renewLeases(queue, {
                owner,
                ids: rows.map((r) => r.id),
                until: new Date(Date.now() + 60_000),
              });
            }
            const giveBack = rows.filter(() => !draining && next() < 0.1);
            for (const row of giveBack) {
              held.delete(row.id);
              await releaseLease(queue, { owner, id: row.id, stripe: k });
            }
            const batch: AttemptResult[] = rows
              .filter((row) => !giveBack.includes(row))
              .map((row) => {
                const fail = !draining && next() < 0.3;
                const now = Date.now();
                return {
                  row,
                  status: fail ? 500 : 204,
                  error: null,
                  prefix: null,
                  outcome: fail ? 'failed' : 'succeeded',
                  nextStatus: fail ? 'failed' : 'succeeded',
                  nextAttemptAt: fail ? new Date(now) : null,
                  started: now,
                  finished: now,
                  congested: false,
                  fast: !fail,
                  pauseUntil: null,
                } as AttemptResult;
              });
            // Given up before the write: once it commits, another worker may lease a retry.
            for (const r of batch) held.delete(r.row.id);
            await writeOutcomes(queue, { owner, stripe: k, perEndpoint: 8, batch });
          } catch (error) {
            errors.push(error);
          }
        }
        errors.push(new Error(`${owner} did not drain in ${MAX_ROUNDS} rounds`));
      };

      const pick = async () => {
        const [row] = await db.sql<{ id: string; account_id: string }[]>`
        select id, account_id from holdfast_deliveries order by random() limit 1`;
        return row;
      };
      const replayer = async () => {
        for (let i = 0; i < REPLAYS; i += 1) {
          const row = await pick();
          if (!row) {
            await new Promise((resolve) => setTimeout(resolve, 5));
            continue;
          }
          try {
            const again = await replayDelivery(poolDb, { account: row.account_id, id: row.id });
            if (again) replayed.set(row.id, (replayed.get(row.id) ?? 0) + 1);
          } catch (error) {
            // An attempt running: refused, as it should be.
            if (!(typeof error === 'object' && error !== null && 'status' in error && error.status === 409)) {
              errors.push(error);
            }
          }
        }
        side -= 1;
      };
      const recoverer = async () => {
        for (let i = 0; i < RECOVERS; i += 1) {
          const endpoint = endpoints[i % endpoints.length] as { account: string; id: string };
          try {
            await recoverDeliveries(poolDb, {
              account: endpoint.account,
              endpointId: endpoint.id,
              since: 0,
              max: 50,
            });
          } catch (error) {
            errors.push(error);
          }
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        side -= 1;
      };
      const repairer = async () => {
        for (let i = 0; i < REPAIRS; i += 1) {
          try {
            await reconcileInFlight(queue);
          } catch (error) {
            errors.push(error);
          }
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };

      await Promise.all([
        ...Array.from({ length: WRITERS }, (_, w) => writer(w)),
        ...Array.from({ length: WORKERS }, (_, k) => worker(k)),
        replayer(),
        recoverer(),
        (async () => {
          await repairer();
          side -= 1;
        })(),
      ]);

      if (process.env.STRESS_DEBUG) {
        for (const e of errors.slice(0, 6))
          console.log((e as { detail?: string }).detail ?? e, (e as { where?: string }).where);
      }
      expect(errors.map((e) => String(codeOf(e) ?? e))).toEqual([]);
      expect(deadlocks).toBe(0);
      expect(doubles).toBe(0);

      const events = WRITERS * TXS_PER_WRITER * EVENTS_PER_TX;
      const [counts] = await db.sql<
        {
          events: number;
          deliveries: number;
          pairs: number;
          unfinished: number;
          queued: number;
          unsent: number;
        }[]
      >`
      select (select count(*)::int from holdfast_events) as events,
             (select count(*)::int from holdfast_deliveries) as deliveries,
             (select count(distinct (event_id, endpoint_id))::int from holdfast_deliveries) as pairs,
             (select count(*)::int from holdfast_deliveries where status <> 'succeeded') as unfinished,
             (select count(*)::int from holdfast_delivery_queue) as queued,
             (select count(*)::int from holdfast_deliveries d where not exists (
                select 1 from holdfast_delivery_attempts a where a.delivery_id = d.id and a.status = 204)) as unsent`;
      expect(counts).toEqual({
        events,
        deliveries: events * ENDPOINTS_PER_ACCOUNT,
        pairs: events * ENDPOINTS_PER_ACCOUNT,
        unfinished: 0,
        queued: 0,
        unsent: 0,
      });
      // Sent successfully no more often than it was first sent and then replayed.
      const successes = await db.sql<{ id: string; n: number }[]>`
      select delivery_id as id, count(*)::int as n from holdfast_delivery_attempts
      where status = 204 group by delivery_id having count(*) > 1`;
      const doubled = successes.filter((s) => s.n > 1 + (replayed.get(s.id) ?? 0));
      expect(doubled).toEqual([]);
      // Every in-flight place given back.
      await reconcileInFlight(queue);
      const [places] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from holdfast_endpoint_pacing p
      where p.in_flight <> coalesce((select sum(r.released) from holdfast_endpoint_releases r
                                     where r.endpoint_id = p.endpoint_id), 0)`;
      expect(places?.n).toBe(0);
      expect(replayed.size).toBeGreaterThan(0);
    }, 300_000);
  },
);
