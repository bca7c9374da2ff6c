// A service on node-postgres runs the verifier's inbox (receive, process, purge) and the
// idempotency purge: this file's service code imports pg and @holdfast packages only, never
// postgres.js (the test's own setup opens the schema through the shared test database).
import { fromPg, pgTransaction } from '@holdfast/db/pg';
import { migrations as idempotencyMigrations, idempotent, schedulePurge } from '@holdfast/idempotency';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import {
  postgresDedupStore,
  postgresInbox,
  migrations as verifierMigrations,
} from '@holdfast/webhook-verifier/postgres';
import type { WebhookEvent } from '@holdfast/webhook-verifier/receiver';
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
  for (const migration of [...verifierMigrations(), ...idempotencyMigrations()])
    await db.sql.unsafe(migration.sql);
  await db.sql`create table paid (webhook_id text primary key)`;
});
afterAll(async () => {
  if (realPostgres) await db.close();
});

function event(id: string, payload: unknown): WebhookEvent {
  const text = JSON.stringify(payload);
  return { id, timestamp: 0, type: undefined, payload, body: new TextEncoder().encode(text) };
}

// Real PostgreSQL only: node-postgres needs a server to connect to, and PGlite serves one
// connection.
describe.skipIf(!realPostgres)(
  'a service on node-postgres runs the workers on its own pool (needs DATABASE_URL)',
  () => {
    it('the inbox on the service pool: receives once per id, the handler writes in the entry transaction, a throw rolls its write back, purge deletes expired ids', async () => {
      let clock = 1_700_000_000_000;
      const pool = new pg.Pool({ connectionString: schemaUrl(db.schema), max: 2 });
      const inbox = postgresInbox(fromPg(pool), { now: () => clock });
      const accepted = postgresDedupStore(fromPg(pool), { now: () => clock });
      try {
        expect(
          (await inbox.enqueue(event('msg_1', { type: 'order.paid' }), { scope: 'orders' })).duplicate,
        ).toBe(false);
        expect(
          (await inbox.enqueue(event('msg_1', { type: 'order.paid' }), { scope: 'orders' })).duplicate,
        ).toBe(true);
        expect(
          (await inbox.enqueue(event('msg_2', { type: 'order.paid' }), { scope: 'orders' })).duplicate,
        ).toBe(false);

        const logged: string[] = [];
        const handled = await inbox.process(pgTransaction(pool), {
          log: (message) => logged.push(message),
          async handle(entry, client) {
            await client.query('insert into paid (webhook_id) values ($1::text)', [entry.webhookId]);
            if (entry.webhookId === 'msg_2') throw new Error('the handler failed after its write');
          },
        });
        expect(handled).toBe(2);
        expect(logged).toHaveLength(1);
        // The service reads through its own driver: msg_1's write committed with its mark, msg_2's rolled back.
        const paid = await pool.query<{ webhook_id: string }>('select webhook_id from paid order by 1');
        expect(paid.rows.map((row) => row.webhook_id)).toEqual(['msg_1']);
        const states = await pool.query<{ webhook_id: string; status: string; attempts: number }>(
          'select webhook_id, status, attempts from holdfast_webhook_inbox order by webhook_id',
        );
        expect(states.rows).toEqual([
          { webhook_id: 'msg_1', status: 'processed', attempts: 1 },
          { webhook_id: 'msg_2', status: 'pending', attempts: 1 },
        ]);

        // Nothing has expired yet; past the retention, both accepted ids go.
        expect(await accepted.purge(clock)).toBe(0);
        clock += 8 * 86_400_000;
        expect(await accepted.purge(clock)).toBe(2);
        const dedup = await pool.query<{ n: number }>(
          'select count(*)::int as n from holdfast_webhook_dedup',
        );
        expect(dedup.rows[0]?.n).toBe(0);
      } finally {
        await pool.end();
      }
    });

    it('the idempotency purge on the service pool: expired answers go, live ones stay', async () => {
      const pool = new pg.Pool({ connectionString: schemaUrl(db.schema), max: 2 });
      const at = new Date('2026-01-01T00:00:00Z');
      const day = 86_400_000;
      try {
        for (let i = 0; i < 7; i += 1) {
          // Five answers stored a day before the purge's clock (expired), two an hour before.
          const storedAt = at.getTime() + (i < 5 ? 0 : day - 3_600_000);
          const answer = await idempotent(
            pgTransaction(pool),
            { key: `k-${i}`, account: 'acct_pg', method: 'POST', path: '/v1/things' },
            async () => ({ status: 201 }),
            { now: () => storedAt },
          );
          expect(answer.status).toBe(201);
        }
        // Batches of 2 over 5 expired rows: three statements, each its own short transaction.
        const failures: unknown[] = [];
        const purger = schedulePurge(fromPg(pool), {
          intervalMs: 5,
          batchSize: 2,
          now: () => at.getTime() + day,
          onError: (error) => failures.push(error),
        });
        const left = async () =>
          (
            await pool.query<{ key: string }>(
              "select key from holdfast_idempotency_keys where account = 'acct_pg' order by key",
            )
          ).rows.map((row) => row.key);
        for (let round = 0; round < 200 && (await left()).length > 2; round += 1)
          await new Promise((resolve) => setTimeout(resolve, 10));
        await purger.stop();
        expect(failures).toEqual([]);
        expect(await left()).toEqual(['k-5', 'k-6']);
      } finally {
        await pool.end();
      }
    });
  },
);
