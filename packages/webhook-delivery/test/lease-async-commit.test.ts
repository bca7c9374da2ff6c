import type { TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { leaseDue } from '../src/lease';
import { dueDeliveries, queueDatabase } from './fixtures/queue';

// The lease statement is on every webhook's path: its transaction commits without waiting for
// the WAL flush (synchronous_commit off for that transaction only), and the setting does not
// outlive it on the connection, whose other statements (outcomes) stay durable.

const ACCOUNT = 'acct_async_lease';
const AT = new Date('2026-11-20T10:05:00Z');
let db: TestDatabase;
let endpointId = '';

beforeAll(async () => {
  ({ db, endpointId } = await queueDatabase(ACCOUNT, 4));
  await dueDeliveries(db.sql, { account: ACCOUNT, endpointId, tag: 'async', from: 1, to: 3 });
});
afterAll(async () => {
  await db?.close();
});

it('leases in a transaction that commits asynchronously, and only that one', async () => {
  const connection = await db.sql.reserve();
  const setting = async () =>
    ((await connection.unsafe('show synchronous_commit')) as { synchronous_commit: string }[])[0]
      ?.synchronous_commit;
  try {
    await connection.unsafe('begin');
    expect(await setting()).toBe('on');
    const rows = await leaseDue(connection, {
      owner: 'wrk_async',
      limit: 10,
      perEndpoint: 4,
      at: AT,
      leaseMs: 40_000,
      paused: [],
      endpointShare: 10,
      running: new Map(),
    });
    expect(rows).toHaveLength(3);
    expect(await setting()).toBe('off');
    await connection.unsafe('commit');
    // The same connection afterwards: back to its own setting, so its outcomes stay durable.
    expect(await setting()).toBe('on');
  } finally {
    connection.release();
  }
});
