import { fromPg } from '@holdfast/db/pg';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoint, enqueueEvent, migrations } from '../src/index';
import { leaseDue } from '../src/lease';
import { workerStatements } from '../src/sql/worker';
import { endPools, pgPool } from './fixtures/db';

afterAll(endPools);

// A round moves the turns of the endpoints it serves to its own time. Another worker's round
// that planned a moment earlier, or runs on a host whose clock is a little behind, must still
// find those turns come once it sees the move: otherwise every endpoint the first worker keeps
// serving is out of the second's reach, and a second worker (or machine) adds nothing.

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
});
afterAll(() => db?.close());

describe.skipIf(!realPostgres)('turns moved by another worker', () => {
  it.each([1, 200, 5_000])(
    'a round planned %i ms before another worker moved the turn still serves the endpoint',
    async (behindMs) => {
      const pool = pgPool(db, 2);
      const poolDb = fromPg(pool);
      const queue = { db: poolDb, sql: workerStatements() };
      const account = `acct_turns_${behindMs}`;
      const { endpoint } = await createEndpoint(
        poolDb,
        { account, url: 'http://127.0.0.1:1024/hook' },
        { allowPrivateDestinations: true, concurrencyMax: 200, concurrencyInitial: 200 },
      );
      // The only endpoint with work: an earlier case's deliveries are finished.
      await poolDb.query(
        `update holdfast_deliveries set status = 'dead', next_attempt_at = null
         where account_id <> $1::text and status in ('pending', 'failed')`,
        [account],
      );
      for (let e = 0; e < 10; e += 1) {
        await enqueueEvent(poolDb, { account, type: 'order.created', resourceId: `ord_${e}`, object: { e } });
      }
      // Due well before either round's time, so only the turn can keep a round from them.
      await poolDb.query(
        `update holdfast_deliveries set next_attempt_at = now() - interval '1 hour' where account_id = $1::text`,
        [account],
      );
      const round = (owner: string, at: Date) =>
        leaseDue(queue, {
          owner,
          limit: 1,
          perEndpoint: 200,
          at,
          leaseMs: 600_000,
          paused: [],
          endpointShare: 200,
          running: new Map(),
        });
      const first = new Date();
      const a = await round('wrk_a', first);
      expect(a.map((row) => row.endpoint_id)).toEqual([endpoint.id]);
      const turn = await poolDb.query<{ ms: number }>(
        `select (extract(epoch from turn) * 1000)::float8 as ms from holdfast_endpoint_queue q
         join holdfast_webhook_endpoints e on e.id = q.endpoint_id where e.account_id = $1::text`,
        [account],
      );
      expect(turn[0]?.ms).toBe(first.getTime());

      const b = await round('wrk_b', new Date(first.getTime() - behindMs));
      expect(b.map((row) => row.endpoint_id)).toEqual([endpoint.id]);
      expect(b[0]?.id).not.toBe(a[0]?.id);
    },
  );
});
