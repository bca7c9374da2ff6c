import { fromPg } from '@holdfast/db/pg';
import { fromPostgres, postgresListener } from '@holdfast/db/postgres';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryWorker, createEndpoint, enqueueEvent, migrations } from '../src/index';
import { queueDepth } from '../src/prometheus';
import { endPools, pgPool } from './fixtures/db';
import { webhookReceiver } from './fixtures/receiver';

// The sender's tables in a schema of their own, the worker's pool on a search_path that does not
// reach them: every statement names the schema, and the lease and outcome functions find their
// tables beside them whatever the caller's search_path.

afterAll(endPools);

let db: TestDatabase;

describe.skipIf(!realPostgres)('schema', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
    for (const migration of migrations()) await db.sql.unsafe(migration.sql);
  });
  afterAll(() => db.close());

  it('runs the worker and the queue gauges on a pool whose search_path does not reach the tables', async () => {
    const hook = await webhookReceiver();
    const { received } = hook;
    await createEndpoint(
      fromPostgres(db.sql),
      { account: 'acct_schema', url: hook.url },
      { allowPrivateDestinations: true },
    );
    const pool = pgPool(db, 4, { options: '-c search_path=holdfast_nowhere' });
    const elsewhere = fromPg(pool);
    await expect(elsewhere.query('select 1 from holdfast_deliveries')).rejects.toMatchObject({
      code: '42P01',
    });
    const worker = createDeliveryWorker({
      db: elsewhere,
      schema: db.schema,
      // Woken by the outbox's notification on the schema's channel: the poll would take an hour.
      listener: postgresListener(db.sql),
      pollMs: 3_600_000,
      allowPrivateDestinations: true,
      unsafeTimeoutMs: 5_000,
      onError: () => {},
    });
    try {
      worker.start();
      // Listening (the listener's connection last ran its LISTEN) before the event commits.
      const listening = async () =>
        (
          await db.sql`select 1 from pg_stat_activity
            where query ilike 'listen%' and position(${`holdfast_due.${db.schema}`} in query) > 0`
        ).length > 0;
      while (!(await listening())) await new Promise((resolve) => setTimeout(resolve, 10));
      const first = await enqueueEvent(fromPostgres(db.sql), {
        account: 'acct_schema',
        type: 'order.created',
        resourceId: 'ord_1',
        object: {},
      });
      while (received.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(received).toEqual([first.id]);
      const depth = queueDepth(elsewhere, { schema: db.schema });
      await expect(depth()).resolves.toMatchObject({ due: 0, dead: 0 });
    } finally {
      await worker.stop();
      hook.close();
    }
    const [row] = await db.sql<{ status: string }[]>`select status from holdfast_deliveries`;
    expect(row?.status).toBe('succeeded');
  });
});
