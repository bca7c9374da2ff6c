import { fromPg } from '@holdfast/db/pg';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoint, enqueueEvent, migrations } from '../src/index';
import { leaseDue } from '../src/lease';
import { workerStatements } from '../src/sql/worker';
import { endPools, pgPool } from './fixtures/db';

afterAll(endPools);

// Endpoints that went idle have their turns moved to `infinity` by the workers' repair; each
// delivery a burst of events then makes for them appends a wake. The next round must bring back
// every endpoint it can serve, not only those whose wakes come first in the wakes' index.

// 32 endpoints share the round's 128 places exactly, 4 each, so every one is served whatever
// order the round picks in. With 40, each would be offered 4 (160 for 128 places) and the round's
// random cut leaves out one endpoint's 4 in about 1 round in 20.
const ENDPOINTS = 32;
const EVENTS = 30;

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
});
afterAll(() => db?.close());

describe.skipIf(!realPostgres)('wakes after a burst to idle endpoints', () => {
  it('one round serves every endpoint a burst woke, however many wakes each has', async () => {
    const pool = pgPool(db, 2);
    const poolDb = fromPg(pool);
    const queue = { db: poolDb, sql: workerStatements() };
    for (let i = 0; i < ENDPOINTS; i += 1) {
      await createEndpoint(
        poolDb,
        { account: 'acct_wakes', url: `http://127.0.0.1:1024/hook/${i}` },
        { allowPrivateDestinations: true, concurrencyMax: 200, concurrencyInitial: 200 },
      );
    }
    // The repair finds nothing to lease and moves every turn to the end.
    await poolDb.query('select holdfast_queue_settle(now(), 1000)');
    const idle = await poolDb.query<{ n: string }>(
      `select count(*)::text as n from holdfast_endpoint_queue where turn = 'infinity'`,
    );
    expect(Number(idle[0]?.n)).toBe(ENDPOINTS);

    for (let e = 0; e < EVENTS; e += 1) {
      await enqueueEvent(poolDb, {
        account: 'acct_wakes',
        type: 'order.created',
        resourceId: `ord_${e}`,
        object: { e },
      });
    }
    const wakes = await poolDb.query<{ n: string }>(
      'select count(*)::text as n from holdfast_endpoint_wakes',
    );
    // More wakes than a round reads rows of (four times its limit), as the burst made them.
    expect(Number(wakes[0]?.n)).toBe(ENDPOINTS * EVENTS);

    const rows = await leaseDue(queue, {
      owner: 'wrk_wakes',
      limit: 128,
      perEndpoint: 200,
      at: new Date(Date.now() + 1_000),
      leaseMs: 600_000,
      paused: [],
      endpointShare: 200,
      running: new Map(),
    });
    const served = new Set(rows.map((row) => row.endpoint_id));
    expect(served.size).toBe(ENDPOINTS);
    expect(rows.length).toBe(128);
    const left = await poolDb.query<{ n: string }>('select count(*)::text as n from holdfast_endpoint_wakes');
    expect(Number(left[0]?.n)).toBe(0);
  });
});
