import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fromPg, pgListener } from '@holdfast/db/pg';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryWorker, createEndpoint, enqueueEvent, migrations } from '../src/index';
import { endPools, pgDb, pgPool } from './fixtures/db';
import { webhookReceiver } from './fixtures/receiver';

// Wake on commit: the outbox notifies in its own statement, PostgreSQL delivers it at commit.
// PGlite has no listening connection beside the pool; there the worker polls (delivery.test.ts),
// as it does on PostgreSQL when given no listener.

const postgresOnly = !process.env.DATABASE_URL;
let db: TestDatabase;
const ACCOUNT = 'acct_wake';
const options = { allowPrivateDestinations: true };
let channel = '';

beforeAll(async () => {
  db = await createTestDatabase();
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
  const [row] = await db.sql<
    { channel: string }[]
  >`select left('holdfast_due.' || current_schema(), 63) as channel`;
  channel = row?.channel ?? '';
});
afterAll(async () => {
  await endPools();
  await db.close();
});

/** Every notification on the wake channel and a marker channel, in the order they arrive. */
async function listener() {
  const heard: string[] = [];
  const marker = `${channel}.marker`;
  const wake = await db.sql.listen(channel, () => heard.push('wake'));
  const mark = await db.sql.listen(marker, (payload) => heard.push(payload));
  /** Commits a marker and resolves once it was heard: everything committed before it was heard first. */
  const fence = async (name: string) => {
    await db.sql`select pg_notify(${marker}, ${name})`;
    while (!heard.includes(name)) await new Promise((r) => setTimeout(r, 5));
  };
  return {
    heard,
    fence,
    stop: async () => {
      await wake.unlisten();
      await mark.unlisten();
    },
  };
}

const order = (id: string) => ({
  account: ACCOUNT,
  type: 'order.created',
  resourceId: id,
  object: { id, updatedAt: '2026-11-26T00:00:00.000Z' },
});

describe.skipIf(postgresOnly)('wake on commit (PostgreSQL)', () => {
  it('notifies once per transaction that created deliveries, at its commit, never on rollback', async () => {
    await db.sql`truncate holdfast_webhook_endpoints, holdfast_events, holdfast_delivery_attempts, holdfast_resource_sequences cascade`;
    await createEndpoint(fromPostgres(db.sql), { account: ACCOUNT, url: 'http://127.0.0.1:9999/a' }, options);
    await createEndpoint(fromPostgres(db.sql), { account: ACCOUNT, url: 'http://127.0.0.1:9999/b' }, options);
    const l = await listener();
    try {
      await db.sql.begin(async (tx) => {
        for (const id of ['ord_w1', 'ord_w2', 'ord_w3']) await enqueueEvent(fromPostgres(tx), order(id));
        await l.fence('inside');
      });
      await l.fence('committed');
      await db.sql
        .begin(async (tx) => {
          await enqueueEvent(fromPostgres(tx), order('ord_w4'));
          throw new Error('roll back');
        })
        .catch(() => {});
      await enqueueEvent(fromPostgres(db.sql), { ...order('ord_w5'), account: 'acct_wake_nobody' });
      await l.fence('rolled back and unsubscribed');
      expect(l.heard).toEqual(['inside', 'wake', 'committed', 'rolled back and unsubscribed']);
    } finally {
      await l.stop();
    }
  });

  it('wakes an idle worker whose poll would not come for an hour', async () => {
    await db.sql`truncate holdfast_webhook_endpoints, holdfast_events, holdfast_delivery_attempts, holdfast_resource_sequences cascade`;
    const received: string[] = [];
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received.push(String(req.headers['webhook-id']));
        res.statusCode = 204;
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    await createEndpoint(fromPostgres(db.sql), { account: ACCOUNT, url }, options);
    // The worker's own node-postgres pool, its listener holding one client of it.
    const pool = pgPool(db, 4);
    const worker = createDeliveryWorker({
      db: fromPg(pool),
      listener: pgListener(pool),
      ...options,
      pollMs: 3_600_000,
      onError: () => {},
    });
    try {
      worker.start();
      // The first event is found by the worker's first round or by its notification; once its
      // outcome is written the worker is idle, waiting an hour for its next poll.
      const first = await enqueueEvent(fromPostgres(db.sql), order('ord_w6'));
      const settled = async () =>
        (await db.sql`select 1 from holdfast_deliveries where status = 'succeeded'`).length;
      while ((await settled()) === 0) await new Promise((r) => setTimeout(r, 5));
      const second = await enqueueEvent(fromPostgres(db.sql), order('ord_w7'));
      while (received.length < 2) await new Promise((r) => setTimeout(r, 5));
      expect(received).toEqual([first.id, second.id]);
    } finally {
      await worker.stop();
      server.closeAllConnections();
      server.close();
    }
  });

  it('reports a listener that cannot listen to onError and finds new deliveries by the poll', async () => {
    await db.sql`truncate holdfast_webhook_endpoints, holdfast_events, holdfast_delivery_attempts, holdfast_resource_sequences cascade`;
    const hook = await webhookReceiver();
    const { received } = hook;
    await createEndpoint(fromPostgres(db.sql), { account: ACCOUNT, url: hook.url }, options);
    const errors: unknown[] = [];
    const refused = new Error('LISTEN refused');
    const worker = createDeliveryWorker({
      db: pgDb(db),
      listener: { listen: () => Promise.reject(refused) },
      ...options,
      pollMs: 20,
      onError: (error) => errors.push(error),
    });
    try {
      worker.start();
      const event = await enqueueEvent(fromPostgres(db.sql), order('ord_w8'));
      while (received.length < 1) await new Promise((r) => setTimeout(r, 5));
      expect(received).toEqual([event.id]);
      expect(errors).toContain(refused);
    } finally {
      await worker.stop();
      hook.close();
    }
  });
});
