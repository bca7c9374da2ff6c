// A service on node-postgres: this file's service code imports pg and @holdfast packages only,
// never postgres.js (the test's own setup opens the schema through the shared test database).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fromPg } from '@holdfast/db/pg';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import {
  createDeliveryWorker,
  createEndpoint,
  enqueueEvent,
  migrations,
  purgeDeliveryHistory,
} from '@holdfast/webhook-delivery';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let db: TestDatabase;

function schemaUrl(schema: string): string {
  const url = new URL(process.env.DATABASE_URL ?? '');
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

beforeAll(async () => {
  if (!realPostgres) return;
  db = await createTestDatabase();
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
});
afterAll(async () => {
  if (realPostgres) await db.close();
});

// Real PostgreSQL only: the worker opens its own pool from a connection string, beside the
// service's node-postgres pool, and PGlite serves one connection.
describe.skipIf(!realPostgres)('a service on node-postgres (needs DATABASE_URL: two pools)', () => {
  it('enqueues events in its own pg transactions, and the worker on its own pg pool delivers each once', async () => {
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
      });
      req.on('end', () => {
        bodies.push(body);
        res.statusCode = 204;
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    // The service: node-postgres, its own transaction, the event enqueued inside it.
    const pool = new pg.Pool({ connectionString: schemaUrl(db.schema), max: 2 });
    await createEndpoint(fromPg(pool), { account: 'acct_pg', url }, { allowPrivateDestinations: true });
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const client = await pool.connect();
      try {
        await client.query('begin');
        const event = await enqueueEvent(fromPg(client), {
          account: 'acct_pg',
          type: 'order.created',
          resourceId: `ord_${i}`,
          object: { id: `ord_${i}` },
        });
        ids.push(event.id);
        await client.query('commit');
      } finally {
        client.release();
      }
    }
    // One more, rolled back: never delivered.
    const client = await pool.connect();
    await client.query('begin');
    await enqueueEvent(fromPg(client), {
      account: 'acct_pg',
      type: 'order.created',
      resourceId: 'ord_x',
      object: {},
    });
    await client.query('rollback');
    client.release();
    await pool.end();

    const workerPool = new pg.Pool({ connectionString: schemaUrl(db.schema), max: 2 });
    const worker = createDeliveryWorker({
      db: fromPg(workerPool),
      allowPrivateDestinations: true,
      unsafeTimeoutMs: 1000,
    });
    try {
      let sent = 1;
      while (sent > 0) sent = await worker.runOnce();
    } finally {
      await worker.stop();
      await workerPool.end();
      server.closeAllConnections();
      server.close();
    }
    const delivered = bodies.map((body) => (JSON.parse(body) as { id: string }).id);
    expect(delivered.sort()).toEqual([...ids].sort());

    // The history purge through the service's own pool: nothing is old yet, then 40 days on
    // every attempt and every finished event go.
    const purgePool = new pg.Pool({ connectionString: schemaUrl(db.schema), max: 1 });
    try {
      expect(await purgeDeliveryHistory(fromPg(purgePool))).toBe(0);
      const later = () => Date.now() + 40 * 86_400_000;
      // Retention drops whole partitions: today's events, deliveries and attempts, now 40 days old.
      expect(await purgeDeliveryHistory(fromPg(purgePool), { now: later })).toBeGreaterThanOrEqual(3);
      const { rows } = await purgePool.query('select count(*)::int as n from holdfast_events');
      expect(rows[0]?.n).toBe(0);
    } finally {
      await purgePool.end();
    }
  });
});
