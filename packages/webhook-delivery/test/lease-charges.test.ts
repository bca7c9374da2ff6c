import { fromPg } from '@holdfast/db/pg';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoint, enqueueEvent, migrations } from '../src/index';
import { leaseDue } from '../src/lease';
import { workerStatements } from '../src/sql/worker';
import { endPools, pgPool } from './fixtures/db';

afterAll(endPools);

// A lease round locks each endpoint's pacing row and charges it later in the same statement.
// Outcomes and the adaptive limit's increase rewrite pacing rows all the time, so a round often
// locks a version committed after its snapshot; the charge must land on that version. Counted,
// never timed: rounds race a connection that keeps rewriting every pacing row, and afterwards
// every endpoint's in-flight count equals its leases (none released here).

const ENDPOINTS = 24;
const EVENTS = 100;
const ROUNDS = 150;

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
});
afterAll(() => db?.close());

describe.skipIf(!realPostgres)('lease charges while pacing rows are rewritten', () => {
  it('charges every delivery leased to its endpoint, whatever commits between the snapshot and the lock', async () => {
    const pool = pgPool(db, 4);
    const poolDb = fromPg(pool);
    const queue = { db: poolDb, sql: workerStatements() };
    for (let i = 0; i < ENDPOINTS; i += 1) {
      await createEndpoint(
        poolDb,
        { account: 'acct_charges', url: `http://127.0.0.1:1024/hook/${i}` },
        { allowPrivateDestinations: true, concurrencyMax: 200, concurrencyInitial: 200 },
      );
    }
    for (let e = 0; e < EVENTS; e += 1) {
      await enqueueEvent(poolDb, {
        account: 'acct_charges',
        type: 'order.created',
        resourceId: `ord_${e}`,
        object: { e },
      });
    }
    let leasing = true;
    let rewrites = 0;
    const rewriter = (async () => {
      while (leasing) {
        await poolDb.query('update holdfast_endpoint_pacing set tokens_at = clock_timestamp()');
        rewrites += 1;
      }
    })();
    let leased = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const rows = await leaseDue(queue, {
        owner: 'wrk_charges',
        limit: 16,
        perEndpoint: 200,
        at: new Date(),
        leaseMs: 600_000,
        paused: [],
        endpointShare: 200,
        running: new Map(),
      });
      leased += rows.length;
    }
    leasing = false;
    await rewriter;
    const counts = await poolDb.query<{ endpoint_id: string; in_flight: string; leases: string }>(
      `select p.endpoint_id, p.in_flight::text,
              (select count(*) from holdfast_delivery_queue q
               where q.endpoint_id = p.endpoint_id and q.lease_expires_at is not null)::text as leases
       from holdfast_endpoint_pacing p order by p.endpoint_id`,
    );
    expect(rewrites).toBeGreaterThan(0);
    expect(leased).toBeGreaterThan(ROUNDS);
    expect(counts.map((c) => [c.endpoint_id, Number(c.in_flight)])).toEqual(
      counts.map((c) => [c.endpoint_id, Number(c.leases)]),
    );
  });
});
