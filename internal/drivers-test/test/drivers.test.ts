import { randomUUID } from 'node:crypto';
import { type Page, paginate } from '@holdfast/cursor-pagination';
import type { Db, Transaction } from '@holdfast/db';
import { fromPostgres } from '@holdfast/db/postgres';
import { migrations as idempotencyMigrations, idempotent } from '@holdfast/idempotency';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import { createEndpoint, migrations as deliveryMigrations, enqueueEvent } from '@holdfast/webhook-delivery';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Driver,
  drizzleDriver,
  kyselyDriver,
  pgDriver,
  postgresJsDriver,
  prismaDriver,
  schemaUrl,
} from './drivers';

// Real PostgreSQL only: the cases run 20 transactions at once on separate connections, and
// PGlite serves one session (one connection) at a time.
const ACCOUNT = 'acct_drivers';
const itemSort = defineSortAllowlist({
  fields: {
    createdAt: { column: 'created_at', type: 'timestamp' },
    total: { column: 'total', type: 'number', nullable: true },
    status: { column: 'status', type: 'enum', rank: ['pending', 'shipped', 'cancelled'] },
  },
  id: { column: 'id' },
  default: '-createdAt',
});
const keyring = { current: 'k1', keys: { k1: 'drivers-test-secret-drivers-test-secret-01' } };
const sortSpec = fc
  .subarray(['createdAt', 'total', 'status'], { minLength: 1 })
  .chain((aliases) =>
    fc.tuple(
      fc.constant(aliases),
      fc.array(fc.boolean(), { minLength: aliases.length, maxLength: aliases.length }),
    ),
  )
  .map(([aliases, descending]) => aliases.map((alias, i) => (descending[i] ? `-${alias}` : alias)).join(','));

let db: TestDatabase;

beforeAll(async () => {
  if (!realPostgres) return;
  db = await createTestDatabase();
  for (const migration of [...idempotencyMigrations(), ...deliveryMigrations()])
    await db.sql.unsafe(migration.sql);
  await db.sql`create table drivers_orders (id text primary key, amount int not null)`;
  // 1,000 rows with many ties: 5 timestamps, 10 totals and NULL, 3 statuses.
  await db.sql`create table drivers_items (id text primary key, created_at timestamptz(3) not null,
    total int, status text not null)`;
  await db.sql`insert into drivers_items
    select 'itm_' || lpad(i::text, 4, '0'), '2026-01-01T00:00:00.123Z'::timestamptz + (i % 5) * interval '1 day',
           case when i % 11 = 0 then null else i % 10 end, (array['pending', 'shipped', 'cancelled'])[1 + i % 3]
    from generate_series(1, 1000) as i`;
  await createEndpoint(
    fromPostgres(db.sql),
    { account: ACCOUNT, url: 'http://127.0.0.1:9999/hooks' },
    { allowPrivateDestinations: true },
  );
}, 120_000);
afterAll(async () => {
  if (realPostgres) await db.close();
});

const makers: readonly [string, (url: string) => Driver | Promise<Driver>][] = [
  ['postgres.js', postgresJsDriver],
  ['node-postgres', pgDriver],
  ['Drizzle', drizzleDriver],
  ['Kysely', kyselyDriver],
  ['Prisma', prismaDriver],
];

/** The service's POST /v1/orders on any driver: the order, its event and the answer in one transaction. */
function placeOrder(driver: Driver, key: string, amount: number, runs: { count: number }, fail = false) {
  const transaction: Transaction<Db> = (work) => driver.transaction((tx) => work(tx, tx));
  return idempotent(
    transaction,
    { key, account: ACCOUNT, method: 'POST', path: '/v1/orders', body: { amount } },
    async (tx) => {
      runs.count += 1;
      const id = `ord_${randomUUID()}`;
      await tx.query('insert into drivers_orders (id, amount) values ($1::text, $2::int)', [id, amount]);
      await enqueueEvent(tx, {
        account: ACCOUNT,
        type: 'order.created',
        resourceId: id,
        object: { id, amount },
      });
      if (fail) throw new Error('the handler failed after its writes');
      return { status: 201, body: { id, amount } };
    },
  );
}

async function effects(key: string) {
  const [row] = await db.sql<{ orders: number; keys: number; events: number; deliveries: number }[]>`
    select
      (select count(*)::int from drivers_orders o
        where o.id = (select (convert_from(response_body, 'utf8')::jsonb)->>'id'
                      from holdfast_idempotency_keys where key = ${key})) as orders,
      (select count(*)::int from holdfast_idempotency_keys where key = ${key} and response_status = 201) as keys,
      (select count(*)::int from holdfast_events ev join holdfast_idempotency_keys k
        on ev.resource_id = (convert_from(k.response_body, 'utf8')::jsonb)->>'id' where k.key = ${key}) as events,
      (select count(*)::int from holdfast_deliveries d join holdfast_events ev on ev.id = d.event_id
        join holdfast_idempotency_keys k on ev.resource_id = (convert_from(k.response_body, 'utf8')::jsonb)->>'id'
        where k.key = ${key}) as deliveries`;
  return row;
}

describe.skipIf(!realPostgres).each(makers)(
  '%s through the Db boundary (needs DATABASE_URL: many connections)',
  (_, make) => {
    let driver: Driver;
    beforeAll(async () => {
      driver = await make(schemaUrl(db.schema));
    }, 120_000);
    afterAll(() => driver.close());

    it("hands the driver's own transaction, typed, and the same transaction as a Db", async () => {
      expect(await driver.native()).toEqual([42, 42]);
    });

    it('commits the business write, the idempotency record and the outbox event together', async () => {
      const key = randomUUID();
      const response = await placeOrder(driver, key, 42, { count: 0 });
      expect(response.status).toBe(201);
      expect(await effects(key)).toEqual({ orders: 1, keys: 1, events: 1, deliveries: 1 });
    });

    it('leaves none of the three when the handler throws and the transaction rolls back', async () => {
      const key = randomUUID();
      const before = await db.sql<{ orders: number; events: number }[]>`
      select (select count(*)::int from drivers_orders) as orders, (select count(*)::int from holdfast_events) as events`;
      await expect(placeOrder(driver, key, 7, { count: 0 }, true)).rejects.toThrow('the handler failed');
      const after = await db.sql<{ orders: number; events: number; keys: number }[]>`
      select (select count(*)::int from drivers_orders) as orders, (select count(*)::int from holdfast_events) as events,
             (select count(*)::int from holdfast_idempotency_keys where key = ${key}) as keys`;
      expect(after[0]).toEqual({ ...before[0], keys: 0 });
    });

    it('replays the stored answer for the same key without running the handler', async () => {
      const key = randomUUID();
      const runs = { count: 0 };
      const first = await placeOrder(driver, key, 5, runs);
      const replay = await placeOrder(driver, key, 5, runs);
      expect(runs.count).toBe(1);
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await replay.json()).toEqual(await first.json());
      expect(await effects(key)).toEqual({ orders: 1, keys: 1, events: 1, deliveries: 1 });
    });

    it('executes 20 parallel requests with one key once, and answers every one the same (a 409 while it runs, retried)', async () => {
      const key = randomUUID();
      const runs = { count: 0 };
      // While the first runs, a repeat is 409 idempotency_key_in_use (Retry-After): the client retries.
      const placed = async (): Promise<Response> => {
        for (let attempt = 0; ; attempt += 1) {
          try {
            return await placeOrder(driver, key, 9, runs);
          } catch (error) {
            if (attempt > 100 || (error as { status?: number }).status !== 409) throw error;
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        }
      };
      const responses = await Promise.all(Array.from({ length: 20 }, placed));
      expect(runs.count).toBe(1);
      const bodies = await Promise.all(responses.map((r) => r.json()));
      expect(responses.map((r) => r.status)).toEqual(Array(20).fill(201));
      expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
      expect(await effects(key)).toEqual({ orders: 1, keys: 1, events: 1, deliveries: 1 });
    });

    it('walks 1,000 rows with ties page by page in its own transaction, each row once, under any mixed sort', async () => {
      await fc.assert(
        fc.asyncProperty(sortSpec, fc.integer({ min: 50, max: 200 }), async (sort, limit) => {
          const seen = await driver.transaction(async (tx) => {
            const ids: string[] = [];
            let cursor: string | null = null;
            for (let page = 0; page < 100; page += 1) {
              const result: Page<Record<string, unknown>> = await paginate(tx, {
                from: 'drivers_items',
                select: 'id',
                allowlist: itemSort,
                sort,
                cursor,
                limit,
                binding: { account: ACCOUNT, resource: 'items' },
                keyring,
              });
              for (const row of result.data) ids.push(String(row.id));
              cursor = result.pageInfo.nextCursor;
              if (cursor === null) break;
            }
            return ids;
          });
          expect(seen.length).toBe(1000);
          expect(new Set(seen).size).toBe(1000);
        }),
        { numRuns: 6 },
      );
    }, 120_000);
  },
);
