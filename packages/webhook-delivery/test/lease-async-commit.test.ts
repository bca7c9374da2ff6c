import { expect, it } from 'vitest';
import { leaseDue } from '../src/lease';
import { dueDeliveries, queueDatabase } from './fixtures/queue';

// The lease statement is on every webhook's path: its transaction commits without waiting for
// the WAL flush (synchronous_commit off for that transaction only), and the setting does not
// outlive it on the connection, whose other statements (outcomes) stay durable.

it('leases in a transaction that commits asynchronously, and only that one', async () => {
  const { db, endpointId } = await queueDatabase('acct_async_lease', 4);
  const connection = await db.sql.reserve();
  const setting = async () =>
    ((await connection.unsafe('show synchronous_commit')) as { synchronous_commit: string }[])[0]
      ?.synchronous_commit;
  try {
    await dueDeliveries(db.sql, { account: 'acct_async_lease', endpointId, tag: 'async', from: 1, to: 3 });
    await connection.unsafe('begin');
    expect(await setting()).toBe('on');
    const leased = await leaseDue(connection, {
      owner: 'wrk_async',
      limit: 10,
      perEndpoint: 4,
      at: new Date('2026-11-20T10:05:00Z'),
      leaseMs: 40_000,
      paused: [],
      endpointShare: 10,
      running: new Map(),
    });
    expect(leased.map((row) => row.id).sort()).toEqual(['dlv_async_1', 'dlv_async_2', 'dlv_async_3']);
    expect(await setting()).toBe('off');
    await connection.unsafe('commit');
    // The same connection afterwards: back to its own setting.
    expect(await setting()).toBe('on');
  } finally {
    connection.release();
    await db.close();
  }
});
