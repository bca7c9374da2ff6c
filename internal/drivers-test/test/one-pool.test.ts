import { randomUUID } from 'node:crypto';
import { migrations as apiKeyMigrations, createKey, dbApiKeyStore, hashKey } from '@holdfast/api-keys';
import { type Page, paginate } from '@holdfast/cursor-pagination';
import { statementName } from '@holdfast/db';
import { migrate } from '@holdfast/db/migrate';
import { fromPg, pgTransaction } from '@holdfast/db/pg';
import { migrations as idempotencyMigrations, idempotent } from '@holdfast/idempotency';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { defineSortAllowlist } from '@holdfast/sort-allowlist';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schemaUrl } from './drivers';

// Three packages on ONE node-postgres pool of two connections, as a service holds them: every
// connection is reused by pagination, idempotency and the key store in turn, so each prepares
// the others' statements beside its own. Names come from the statement text, so no two texts
// ever share a name on a connection (before, each package numbered its own: `holdfast_1` was
// "used for a different statement" as soon as a connection was reused).

const ACCOUNT = 'acct_pool';
const ITERATIONS = 150;
const itemSort = defineSortAllowlist({
  fields: { createdAt: { column: 'created_at', type: 'timestamp' }, n: { column: 'n', type: 'number' } },
  id: { column: 'id' },
  default: '-createdAt',
});
const keyring = { current: 'k1', keys: { k1: 'a-test-secret-of-at-least-32-bytes!!' } };

describe.skipIf(!realPostgres)(
  'paginate, idempotency and api-keys on one node-postgres pool (needs DATABASE_URL)',
  () => {
    let db: TestDatabase;
    let pool: pg.Pool;
    beforeAll(async () => {
      db = await createTestDatabase();
      pool = new pg.Pool({ connectionString: schemaUrl(db.schema), max: 2 });
      await migrate(fromPg(pool), [...apiKeyMigrations(), ...idempotencyMigrations()]);
      await pool.query(`create table pool_items (id text primary key, account text not null,
      created_at timestamptz(3) not null, n int not null)`);
      await pool.query(
        `insert into pool_items
      select 'it_' || i, $1, timestamptz '2026-01-01' + i * interval '1 s', i % 7 from generate_series(1, 60) i`,
        [ACCOUNT],
      );
      await pool.query('create table pool_orders (id text primary key, amount int not null)');
    });
    afterAll(async () => {
      await pool?.end();
      await db?.close();
    });

    it(`${ITERATIONS} rounds of a page walk, an idempotent write and a key lookup, interleaved on 2 connections`, async () => {
      const store = dbApiKeyStore(fromPg(pool));
      const transaction = pgTransaction(pool);
      const keys = await Promise.all(
        Array.from({ length: 3 }, (_, i) => createKey(store, `${ACCOUNT}_${i}`, ['orders:write'])),
      );
      const backends = new Set<number>();
      let cursor: string | null = null;
      for (let round = 0; round < ITERATIONS; round += 1) {
        const idempotencyKey = `k-${round % 40}`; // every key comes back: replays too
        const amount = round % 40;
        const listCursor: string | null = round % 2 === 0 ? cursor : null;
        const listing: Promise<Page<Record<string, unknown>>> = paginate(fromPg(pool), {
          from: 'pool_items',
          where: { text: 'account = $1', values: [ACCOUNT] },
          allowlist: itemSort,
          sort: round % 2 === 0 ? '-createdAt' : 'n',
          cursor: listCursor,
          limit: 7,
          include: round % 5 === 0 ? 'total' : null,
          binding: { account: ACCOUNT, resource: 'items' },
          keyring,
        });
        const [page, answer, found, , pid] = await Promise.all([
          listing,
          idempotent(
            transaction,
            { key: idempotencyKey, account: ACCOUNT, method: 'POST', path: '/v1/orders', body: { amount } },
            async (client) => {
              const id = `ord_${randomUUID()}`;
              await client.query('insert into pool_orders (id, amount) values ($1, $2)', [id, amount]);
              return { status: 201, body: { id, amount } };
            },
          ),
          store.find(hashKey(keys[round % keys.length] ?? '')),
          round % 10 === 0 ? createKey(store, `${ACCOUNT}_new_${round}`, ['*']) : undefined,
          pool.query<{ pid: number }>('select pg_backend_pid() as pid').then((result) => result.rows[0]?.pid),
        ]);
        if (pid !== undefined) backends.add(pid);
        if (round % 2 === 0) cursor = page.pageInfo.nextCursor;
        expect(page.data.length).toBeGreaterThan(0);
        expect(answer.status).toBe(201);
        expect(answer.headers.get('Idempotent-Replayed')).toBe(round < 40 ? null : 'true');
        expect(found?.account).toBe(`${ACCOUNT}_${round % keys.length}`);
      }
      // The same two connections throughout, each now holding the three packages' statements.
      expect(backends.size).toBeLessThanOrEqual(2);
      const { rows: orders } = await pool.query<{ n: number }>('select count(*)::int as n from pool_orders');
      expect(orders[0]?.n).toBe(40);
      const clients = await Promise.all([pool.connect(), pool.connect()]);
      try {
        for (const client of clients) {
          const { rows } = await client.query<{ name: string; statement: string }>(
            `select name, statement from pg_prepared_statements where name like 'hf\\_%'`,
          );
          for (const row of rows) expect(row.name).toBe(statementName(row.statement));
          const texts = rows.map((row) => row.statement).join('\n');
          // Each connection ran statements of all three packages.
          expect(texts).toContain('holdfast_api_keys');
          expect(texts).toContain('holdfast_idempotency_keys');
          expect(texts).toContain('pool_items');
        }
      } finally {
        for (const client of clients) client.release();
      }
    }, 120_000);

    it('the same rounds fail when each package numbers its statements itself (the control: the test sees the collision)', async () => {
      // What each bundled copy of the boundary did before: its own counter, `holdfast_<n>`.
      const counting = (): import('@holdfast/db').Db => {
        const names = new Map<string, string>();
        return {
          async query<Row>(text: string, values: readonly unknown[] = []) {
            let name = names.get(text);
            if (name === undefined) {
              name = `holdfast_${names.size + 1}`;
              names.set(text, name);
            }
            return (await pool.query({ name, text, values: [...values] })).rows as Row[];
          },
        };
      };
      const pagination = counting();
      const keysDb = counting();
      const run = async () => {
        for (let round = 0; round < 20; round += 1) {
          await Promise.all([
            paginate(pagination, {
              from: 'pool_items',
              allowlist: itemSort,
              limit: 3,
              binding: { account: ACCOUNT },
              keyring,
            }),
            dbApiKeyStore(keysDb).find(hashKey(`hf_test_${round}`)),
          ]);
        }
      };
      await expect(run()).rejects.toThrow(/Prepared statements must be unique/);
    });
  },
);
