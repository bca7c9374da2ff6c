import { fromPg } from '@holdfast/db/pg';
import { realPostgres } from '@holdfast/pg/testing';
import { afterAll, expect, it } from 'vitest';
import { leaseDue } from '../src/lease';
import { workerStatements } from '../src/sql/worker';
import { endPools, pgPool } from './fixtures/db';
import { dueDeliveries, queueDatabase } from './fixtures/queue';

afterAll(endPools);

// The lease statement is on every webhook's path: its transaction commits without waiting for
// the WAL flush (synchronous_commit off for that transaction only), and the setting does not
// outlive it on the connection, whose other statements (outcomes) stay durable.

it.skipIf(!realPostgres)(
  'leases in a transaction that commits asynchronously, and only that one',
  async () => {
    const { db, endpointId } = await queueDatabase('acct_async_lease', 4);
    const client = await pgPool(db, 1).connect();
    const setting = async () =>
      ((await client.query('show synchronous_commit')).rows as { synchronous_commit: string }[])[0]
        ?.synchronous_commit;
    try {
      await dueDeliveries(db.sql, { account: 'acct_async_lease', endpointId, tag: 'async', from: 1, to: 3 });
      await client.query('begin');
      expect(await setting()).toBe('on');
      const leased = await leaseDue(
        { db: fromPg(client), sql: workerStatements() },
        {
          owner: 'wrk_async',
          limit: 10,
          perEndpoint: 4,
          at: new Date('2026-11-20T10:05:00Z'),
          leaseMs: 40_000,
          paused: [],
          endpointShare: 10,
          running: new Map(),
        },
      );
      expect(leased.map((row) => row.id).sort()).toEqual(['dlv_async_1', 'dlv_async_2', 'dlv_async_3']);
      expect(await setting()).toBe('off');
      await client.query('commit');
      // The same connection afterwards: back to its own setting.
      expect(await setting()).toBe('on');
    } finally {
      client.release();
      await db.close();
    }
  },
);
