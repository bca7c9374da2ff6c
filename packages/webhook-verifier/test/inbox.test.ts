import type { Db, Transaction } from '@holdfast/db';
import { migrate } from '@holdfast/db/migrate';
import { fromPg, pgTransaction } from '@holdfast/db/pg';
import { fromPostgres, postgresTransaction } from '@holdfast/db/postgres';
import { childDatabaseUrl, createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import fc from 'fast-check';
import pg from 'pg';
import type { TransactionSql } from 'postgres';
import { afterAll, beforeAll, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import { type InboxProcessOptions, migrations, type PostgresInbox, postgresInbox } from '../src/postgres';
import type { WebhookEvent } from '../src/receiver';
import { storableJson } from '../src/storable-json';

// The durable inbox on PostgreSQL: stored with the exact bytes and claimed in one statement,
// processed in the background with types, stale-event discard, retries and failure records;
// the same statements on each driver, through its `Db` and its transaction.

let db: TestDatabase;
let pool: pg.Pool | undefined;
const quiet = () => {};
let clock = 1_700_000_000_000;

beforeAll(async () => {
  db = await createTestDatabase({ max: 2 });
  await migrate(fromPostgres(db.sql), migrations());
  await db.sql`create table paid (webhook_id text primary key)`;
  // node-postgres needs a server of its own to connect to: real PostgreSQL only.
  if (realPostgres) pool = new pg.Pool({ connectionString: childDatabaseUrl(db), max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await db?.close();
});

interface Driver {
  db: () => Db;
  transaction: () => Transaction<unknown>;
}
const drivers: [string, Driver][] = [
  ['postgres.js', { db: () => fromPostgres(db.sql), transaction: () => postgresTransaction(db.sql) }],
  ...(realPostgres
    ? ([
        [
          'node-postgres',
          {
            db: () => fromPg(pool as pg.Pool),
            transaction: () => pgTransaction(pool as pg.Pool),
          },
        ],
      ] as [string, Driver][])
    : []),
];
beforeEach(async () => {
  await db.sql`delete from paid`;
  await db.sql`delete from holdfast_webhook_inbox`;
  await db.sql`delete from holdfast_webhook_versions`;
  await db.sql`delete from holdfast_webhook_dedup`;
});

function event(id: string, payload: string): WebhookEvent {
  const body = new TextEncoder().encode(payload);
  return { id, timestamp: 0, type: undefined, payload: JSON.parse(payload), body };
}

async function row(id: string) {
  const [found] = await db.sql`
    select status, attempts, next_attempt_at, last_error, resource, body, payload, type
    from holdfast_webhook_inbox where id = ${id}`;
  if (!found) throw new Error(`no inbox row ${id}`);
  return found;
}

/** The database's clock (the one its `now()` reads), in ms since the epoch. */
async function databaseClock(): Promise<number> {
  const [found] = await db.sql<{ at: Date }[]>`select clock_timestamp() as at`;
  if (!found) throw new Error('no clock');
  return found.at.getTime();
}

describe.each(drivers)('on %s', (_driver, driver) => {
  let inbox: PostgresInbox;
  /** `process` in a transaction of this driver. */
  const processOnce = (options: InboxProcessOptions<unknown> = {}) =>
    inbox.process(driver.transaction(), options);
  beforeAll(() => {
    inbox = postgresInbox(driver.db(), { now: () => clock });
  });

  describe('postgresInbox().enqueue', () => {
    it('stores once per scope and id, and says duplicate with the first receipt', async () => {
      const first = await inbox.enqueue(event('msg_1', '{"type":"order.updated"}'), { scope: 'billing' });
      expect(first.duplicate).toBe(false);
      expect(first.receipt).toMatch(/^inb_[0-9a-f]{32}$/);
      const again = await inbox.enqueue(event('msg_1', '{"type":"order.updated"}'), { scope: 'billing' });
      expect(again).toEqual({ duplicate: true, receipt: first.receipt });
      // Another receiver's id space is its own.
      expect((await inbox.enqueue(event('msg_1', '{}'), { scope: 'shipping' })).duplicate).toBe(false);
      const [count] = await db.sql`select count(*)::int as n from holdfast_webhook_inbox`;
      expect(count?.n).toBe(2);
      expect((await row(first.receipt ?? '')).type).toBe('order.updated');
    });

    it('stores a signed null, number, string or array too, with a null type (issue 28: null was a NOT NULL 500)', async () => {
      for (const [i, text] of [
        'null',
        '0',
        '-1.5e300',
        '"just text"',
        '[1,{"type":"x"}]',
        'true',
      ].entries()) {
        const { receipt, duplicate } = await inbox.enqueue(event(`msg_kind_${i}`, text), {
          scope: 'billing',
        });
        expect(duplicate).toBe(false);
        const stored = await row(receipt ?? '');
        expect(new TextDecoder().decode(stored.body)).toBe(text);
        expect(stored.payload).toEqual(JSON.parse(text));
        expect(stored.type).toBeNull();
      }
    });

    it('property: any JSON value is stored exactly (its bytes as sent, its jsonb view as storableJson makes it)', async () => {
      // Strings mix in U+0000 and lone surrogates, which jsonb refuses as they are.
      const value = fc.jsonValue({
        depthSize: 'small',
        maxDepth: 4,
        stringUnit: fc.constantFrom('a', '\u0000', '\ud800', '\udc00', '\u{1F600}', '"'),
      });
      let n = 0;
      await fc.assert(
        fc.asyncProperty(value, async (json) => {
          n += 1;
          const text = JSON.stringify(json);
          const { receipt } = await inbox.enqueue(event(`msg_prop_${n}`, text), { scope: 'property' });
          const stored = await row(receipt ?? '');
          expect(new TextDecoder().decode(stored.body)).toBe(text);
          expect(stored.payload).toEqual(JSON.parse(JSON.stringify(storableJson(JSON.parse(text)))));
        }),
        { numRuns: 60 },
      );
    });

    it('keeps the exact bytes of an event holding U+0000 and lone surrogates, and a jsonb view of it', async () => {
      const text = '{"type":"x","note":"a\\u0000b\\ud800c","k\\udc00":1}';
      const { receipt } = await inbox.enqueue(event('msg_odd', text), { scope: 'billing', tenant: 'acct_1' });
      const stored = await row(receipt ?? '');
      expect(new TextDecoder().decode(stored.body)).toBe(text);
      expect(stored.payload).toEqual({ type: 'x', note: 'a\uFFFDb\uFFFDc', 'k\uFFFD': 1 });
    });

    it('claims the id in holdfast_webhook_dedup in the same statement, and reclaims it once expired', async () => {
      await inbox.enqueue(event('msg_2', '{}'), { scope: 'billing' });
      const [claim] = await db.sql`select expires_at from holdfast_webhook_dedup where key = 'billing msg_2'`;
      expect(claim?.expires_at.getTime()).toBe(clock + 7 * 86_400_000);
      clock += 8 * 86_400_000;
      // The claim expired, but the inbox still holds the event: still a duplicate, stored once.
      expect((await inbox.enqueue(event('msg_2', '{}'), { scope: 'billing' })).duplicate).toBe(true);
    });

    it.skipIf(!realPostgres)(
      'of concurrent enqueues of one id on several connections, exactly one stores it (needs DATABASE_URL)',
      async () => {
        const other = await db.connectAgain(4);
        try {
          const twin = postgresInbox(fromPostgres(other.sql), { now: () => clock });
          const results = await Promise.all(
            Array.from({ length: 8 }, (_, i) =>
              (i % 2 === 0 ? inbox : twin).enqueue(event('msg_race', '{}'), { scope: 'billing' }),
            ),
          );
          expect(results.filter((result) => !result.duplicate)).toHaveLength(1);
          expect(new Set(results.map((result) => result.receipt)).size).toBe(1);
        } finally {
          await other.close();
        }
      },
    );
  });

  describe('postgresInbox().process', () => {
    const versions = (entry: { payload: unknown }) => {
      const p = entry.payload as { id?: string; seq?: number };
      return p.id === undefined || p.seq === undefined ? undefined : { resource: p.id, version: p.seq };
    };

    it('marks unknown types ignored, older versions stale, the rest processed', async () => {
      const a = await inbox.enqueue(event('m1', '{"type":"order.updated","id":"ord_1","seq":5}'), {
        scope: 'billing',
        tenant: 'acct_1',
      });
      // Entries are taken by received_at (milliseconds), then id: two received in the same
      // millisecond come in either order, so m2 is received in a later one.
      await new Promise((resolve) => setTimeout(resolve, 3));
      const b = await inbox.enqueue(event('m2', '{"type":"order.updated","id":"ord_1","seq":4}'), {
        scope: 'billing',
        tenant: 'acct_1',
      });
      const c = await inbox.enqueue(event('m3', '{"type":"rocket.launched"}'), { scope: 'billing' });
      const handled: string[] = [];
      const count = await processOnce({
        types: ['order.updated'],
        versions,
        handle: (entry) => {
          handled.push(entry.webhookId);
        },
        log: quiet,
      });
      expect(count).toBe(3);
      expect(handled).toEqual(['m1']);
      expect((await row(a.receipt ?? '')).status).toBe('processed');
      expect(await row(b.receipt ?? '')).toMatchObject({ status: 'stale', resource: 'ord_1' });
      expect((await row(c.receipt ?? '')).status).toBe('ignored');
      expect(await processOnce({ log: quiet })).toBe(0);
    });

    it('retries a failing entry after 2, then 4 s, sets it aside as failed after maxAttempts, and rolls back its version', async () => {
      const { receipt } = await inbox.enqueue(event('m4', '{"id":"ord_2","seq":1}'), { scope: 'billing' });
      const id = receipt ?? '';
      const ok = await inbox.enqueue(event('m5', '{"id":"ord_3","seq":1}'), { scope: 'billing' });
      const logged: string[] = [];
      const handle = (entry: { webhookId: string }) => {
        if (entry.webhookId === 'm4') throw new Error('downstream refused');
      };
      const log = (message: string) => logged.push(message);
      const before = await databaseClock();
      expect(await processOnce({ versions, handle, log, maxAttempts: 3 })).toBe(2);
      const after = await databaseClock();
      expect((await row(ok.receipt ?? '')).status).toBe('processed');
      const first = await row(id);
      expect(first).toMatchObject({ status: 'pending', attempts: 1 });
      expect(first.last_error).toMatch(/Error: downstream refused/);
      // Due 2 s after the round that failed it, on the database's clock, read before and after
      // the round: however long the round took, the due time lies in that window moved by 2 s.
      const due = first.next_attempt_at.getTime();
      expect(due).toBeGreaterThanOrEqual(before + 2000);
      expect(due).toBeLessThanOrEqual(after + 2000);
      // Its version was rolled back with the failure, so the retry is not mistaken for stale.
      const [version] =
        await db.sql`select count(*)::int as n from holdfast_webhook_versions where resource = 'billing ord_2'`;
      expect(version?.n).toBe(0);
      expect(await processOnce({ versions, handle, log })).toBe(0);
      for (let attempt = 2; attempt <= 3; attempt += 1) {
        await db.sql`update holdfast_webhook_inbox set next_attempt_at = null where id = ${id}`;
        expect(await processOnce({ versions, handle, log, maxAttempts: 3 })).toBe(1);
      }
      expect(await row(id)).toMatchObject({ status: 'failed', attempts: 3, next_attempt_at: null });
      expect(logged).toHaveLength(3);
      expect(logged.at(-1)).toMatch(/set aside/);
    });

    it("commits the handler's writes with the mark, and rolls back a failing entry's alone, even after an SQL error", async () => {
      for (const id of ['w1', 'w2', 'w3'])
        await inbox.enqueue(event(id, '{"type":"order.paid"}'), { scope: 'shop' });
      const logged: string[] = [];
      const handled = await processOnce({
        log: (message) => logged.push(message),
        async handle(entry, _tx, txDb) {
          await txDb.query('insert into paid (webhook_id) values ($1::text)', [entry.webhookId]);
          // w2 writes, then fails inside PostgreSQL: the transaction is aborted until its savepoint
          // is rolled back, and w3 after it must still commit.
          if (entry.webhookId === 'w2') await txDb.query('select 1 / 0');
        },
      });
      expect(handled).toBe(3);
      const rows = await db.sql<{ webhook_id: string }[]>`select webhook_id from paid order by webhook_id`;
      expect(rows.map((r) => r.webhook_id)).toEqual(['w1', 'w3']);
      expect(logged).toHaveLength(1);
      // A division by zero is a data exception (SQLSTATE class 22): its message is withheld.
      expect(logged[0]).toMatch(/SQLSTATE 22012.*withheld/);
      const statuses = await db.sql<{ webhook_id: string; status: string }[]>`
      select webhook_id, status from holdfast_webhook_inbox order by webhook_id`;
      expect(statuses.map((r) => `${r.webhook_id}:${r.status}`)).toEqual([
        'w1:processed',
        'w2:pending',
        'w3:processed',
      ]);
    });

    it('a handler that throws on the last entry leaves the round committed, the entry pending', async () => {
      await inbox.enqueue(event('t1', '{}'), { scope: 'shop' });
      const handled = await processOnce({
        log: quiet,
        handle: () => {
          throw new TypeError('not an order');
        },
      });
      expect(handled).toBe(1);
      const [found] = await db.sql`select status, attempts, last_error from holdfast_webhook_inbox`;
      expect(found).toMatchObject({ status: 'pending', attempts: 1, last_error: 'TypeError: not an order' });
    });

    it('records a failure only while the entry is as it was leased', async () => {
      await inbox.enqueue(event('g1', '{}'), { scope: 'shop' });
      const inner = driver.transaction();
      // Between the rollback and the record, another processor took the entry and handled it.
      const transaction: Transaction<unknown> = async (work) => {
        try {
          return await inner(work);
        } catch (error) {
          await db.sql`update holdfast_webhook_inbox set status = 'processed', attempts = 1`;
          throw error;
        }
      };
      const handled = await inbox.process(transaction, {
        log: quiet,
        handle: () => {
          throw new Error('flaky');
        },
      });
      expect(handled).toBe(1);
      const [found] = await db.sql`select status, attempts, last_error from holdfast_webhook_inbox`;
      expect(found).toMatchObject({ status: 'processed', attempts: 1, last_error: null });
    });

    it('process without a transaction is a TypeError', async () => {
      await expect(inbox.process(undefined as unknown as Transaction<unknown>)).rejects.toThrow(TypeError);
    });
  });
});

// Checked by the type check: `handle`'s `tx` is the transaction of the driver given, uncast,
// with the transaction written inline as the README writes it.
it("types handle's tx as the given driver's transaction", () => {
  const inbox = postgresInbox(fromPostgres(db.sql));
  const onPg = (pool: pg.Pool) =>
    inbox.process(pgTransaction(pool), {
      handle: (_entry, client) => {
        expectTypeOf(client).toEqualTypeOf<pg.PoolClient>();
      },
    });
  const onPostgres = () =>
    inbox.process(postgresTransaction(db.sql), {
      handle: (_entry, tx) => {
        expectTypeOf(tx).toEqualTypeOf<TransactionSql>();
      },
    });
  expectTypeOf(onPg).returns.toEqualTypeOf<Promise<number>>();
  expectTypeOf(onPostgres).returns.toEqualTypeOf<Promise<number>>();
});
