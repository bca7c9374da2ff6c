import { fromPg } from '@holdfast/db/pg';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryWorker, createEndpoint, enqueueEvent, migrations } from '../src/index';
import { leaseDue } from '../src/lease';
import { workerStatements } from '../src/sql/worker';
import { endPools, pgPool } from './fixtures/db';
import { webhookReceiver } from './fixtures/receiver';

afterAll(endPools);

// Every lease round visits, for a few index probes each, the endpoints whose turn has come, those
// with nothing to lease included, until the repair moves their turns later. The repair must run
// often enough that an endpoint gone idle is not walked for long, and may then lock only the
// turns it moves: a writer checks a turn `for key share`, which the repair's lock holds back.

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
});
afterAll(() => db?.close());

const endpointOptions = { allowPrivateDestinations: true, concurrencyMax: 200, concurrencyInitial: 200 };

describe.skipIf(!realPostgres)('the repair of idle turns', () => {
  it('locks only the turns it moves: a writer to an endpoint with work does not wait for it', async () => {
    const pool = pgPool(db, 3);
    const poolDb = fromPg(pool);
    const queue = { db: poolDb, sql: workerStatements() };
    const account = 'acct_settle_locks';
    const make = async (name: string, eventTypes?: string[]) =>
      (
        await createEndpoint(
          poolDb,
          { account, url: `http://127.0.0.1:1024/${name}`, ...(eventTypes ? { eventTypes } : {}) },
          endpointOptions,
        )
      ).endpoint.id;
    const due = await make('due', ['due.created']);
    const leased = await make('leased', ['leased.created']);
    const idle = await make('idle', ['never.created']);
    await enqueueEvent(poolDb, { account, type: 'leased.created', resourceId: 'r1', object: {} });
    const rows = await leaseDue(queue, {
      owner: 'wrk_settle',
      limit: 128,
      perEndpoint: 200,
      at: new Date(),
      leaseMs: 600_000,
      paused: [],
      endpointShare: 200,
      running: new Map(),
    });
    expect(rows.map((row) => row.endpoint_id)).toEqual([leased]);
    await enqueueEvent(poolDb, { account, type: 'due.created', resourceId: 'r2', object: {} });
    const come = await poolDb.query<{ endpoint_id: string }>(
      `select endpoint_id from holdfast_endpoint_queue where endpoint_id = any($1::text[]) and turn <= now()
       order by endpoint_id`,
      [`{${[due, leased, idle].join(',')}}`],
    );
    expect(come.map((r) => r.endpoint_id)).toEqual([due, leased, idle].sort());

    const repair = await pool.connect();
    const writer = await pool.connect();
    try {
      await repair.query('begin');
      const [moved] = (
        await repair.query<{ moved: number }>('select holdfast_queue_settle(now(), 1000) as moved')
      ).rows;
      expect(moved?.moved).toBe(2);
      const keyShare = async (endpoint: string) => {
        try {
          await writer.query(
            'select 1 from holdfast_endpoint_queue where endpoint_id = $1 for key share nowait',
            [endpoint],
          );
          return 'free';
        } catch (error) {
          return (error as { code?: string }).code;
        }
      };
      // The endpoint with a due delivery keeps its turn, unlocked; the two it moves are locked.
      expect(await keyShare(due)).toBe('free');
      expect(await keyShare(leased)).toBe('55P03');
      expect(await keyShare(idle)).toBe('55P03');
      await repair.query('commit');
    } finally {
      await repair.query('rollback').catch(() => {});
      repair.release();
      writer.release();
    }
    const turns = await poolDb.query<{ endpoint_id: string; later: boolean; never: boolean }>(
      `select endpoint_id, turn > now() + interval '1 minute' as later, turn = 'infinity' as never
       from holdfast_endpoint_queue where endpoint_id = any($1::text[])`,
      [`{${[due, leased, idle].join(',')}}`],
    );
    const byId = new Map(turns.map((t) => [t.endpoint_id, t]));
    expect(byId.get(due)).toMatchObject({ later: false, never: false });
    // The leased one comes back when its lease ends; the idle one only with a delivery.
    expect(byId.get(leased)).toMatchObject({ later: true, never: false });
    expect(byId.get(idle)).toMatchObject({ later: true, never: true });
  });

  it('a worker moves the turns of endpoints gone idle well before its in-flight recount', async () => {
    const pool = pgPool(db, 4);
    const poolDb = fromPg(pool);
    const receiver = await webhookReceiver();
    const account = 'acct_settle_worker';
    const ids: string[] = [];
    for (let i = 0; i < 30; i += 1) {
      const { endpoint } = await createEndpoint(
        poolDb,
        { account, url: `${receiver.url}/${i}`, eventTypes: [i === 0 ? 'served.created' : 'none.created'] },
        endpointOptions,
      );
      ids.push(endpoint.id);
    }
    await enqueueEvent(poolDb, { account, type: 'served.created', resourceId: 'r1', object: {} });
    const worker = createDeliveryWorker({ db: poolDb, allowPrivateDestinations: true, pollMs: 50 });
    const comeCount = async () => {
      const [row] = await poolDb.query<{ n: number }>(
        `select count(*)::int as n from holdfast_endpoint_queue where endpoint_id = any($1::text[]) and turn <= now()`,
        [`{${ids.join(',')}}`],
      );
      return row?.n ?? -1;
    };
    expect(await comeCount()).toBe(30);
    worker.start();
    try {
      // The recount (and the repair it also runs) comes every 10 s; the repair of idle turns
      // runs every half second: the served endpoint and the 29 never served all go to the end.
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline && (receiver.received.length < 1 || (await comeCount()) > 0)) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(receiver.received.length).toBe(1);
      expect(await comeCount()).toBe(0);
    } finally {
      await worker.stop();
      receiver.close();
    }
  });
});
