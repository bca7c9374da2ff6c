import { keysetPredicate } from '@holdfast/cursor-pagination/postgres';
import { migrate } from '@holdfast/db/migrate';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { parseSort, type SortAllowlist } from '@holdfast/sort-allowlist';
import { orderBy, sortExpressions } from '@holdfast/sort-allowlist/postgres';
import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverySort } from '../src/api/webhook-schemas';
import { allMigrations } from '../src/db';
import { eventSort } from '../src/resources/events/schema';
import { orderSort, refundSort } from '../src/resources/orders/schema';
import { paymentMethodSort } from '../src/resources/payment-methods/schema';
import { paymentSort } from '../src/resources/payments/schema';
import { subscriptionSort } from '../src/resources/subscriptions/schema';
import { inboundEventSort } from '../src/routes/inbound-events';

// Every served single-key sort, in both directions, and the default sort under each indexed
// equality filter, is an index scan: with sorting disabled in the planner, the plan of the list
// query (first page and a deep page, whose keyset predicate must bound the scan) has no Sort
// node. A missing or mismatched index (say `created_at desc` without NULLS LAST) shows up as a
// Sort, because PostgreSQL still sorts when no index provides the order.

interface List {
  readonly name: string;
  readonly table: string;
  /** The list's fixed conditions, as the route writes them. */
  readonly where: (sql: postgres.Sql) => postgres.Fragment;
  readonly allowlist: SortAllowlist;
  /** Sort keys served by a top-N sort on purpose (enum ranks; documented in migration 520). */
  readonly unindexed?: readonly string[];
  /** Equality filters that have their own index, with a sample value. */
  readonly filters?: Readonly<Record<string, string>>;
}

const LISTS: readonly List[] = [
  {
    name: 'orders',
    table: 'holdfast_orders',
    where: (sql) => sql`account_id = ${'acct_1'}`,
    allowlist: orderSort,
    unindexed: ['status'],
    filters: { status: 'pending' },
  },
  {
    name: 'refunds',
    table: 'holdfast_refunds',
    where: (sql) => sql`account_id = ${'acct_1'} and order_id = ${'ord_1'}`,
    allowlist: refundSort,
    unindexed: ['amount'],
  },
  {
    name: 'payment methods',
    table: 'holdfast_payment_methods',
    where: (sql) => sql`account_id = ${'acct_1'} and deleted_at is null`,
    allowlist: paymentMethodSort,
  },
  {
    name: 'payments',
    table: 'holdfast_payments',
    where: (sql) => sql`account_id = ${'acct_1'}`,
    allowlist: paymentSort,
    unindexed: ['status'],
    filters: { status: 'succeeded', order_id: 'ord_1' },
  },
  {
    name: 'subscriptions',
    table: 'holdfast_subscriptions',
    where: (sql) => sql`account_id = ${'acct_1'}`,
    allowlist: subscriptionSort,
    unindexed: ['status'],
  },
  {
    name: 'inbound events',
    table: 'holdfast_webhook_inbox',
    where: (sql) => sql`tenant = ${'acct_1'}`,
    allowlist: inboundEventSort,
    filters: { status: 'pending' },
  },
  {
    name: 'events',
    table: 'holdfast_events',
    where: (sql) => sql`account_id = ${'acct_1'}`,
    allowlist: eventSort,
  },
  {
    name: 'deliveries',
    table: 'holdfast_deliveries',
    where: (sql) => sql`account_id = ${'acct_1'}`,
    allowlist: deliverySort,
    unindexed: ['status'],
    filters: { endpoint_id: 'we_1' },
  },
];

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ max: 1 });
  await migrate(fromPostgres(db.sql), await allMigrations());
});
afterAll(() => db.close());

/** Sample cursor values for a deep page: text for every term, the id last. */
function deepValues(terms: ReturnType<typeof sortExpressions>): string[] {
  return terms.map((term) =>
    term.type === 'timestamp'
      ? '2026-01-01 00:00:00+00'
      : term.type === 'id'
        ? 'x_1'
        : term.type === 'number'
          ? '100'
          : 'a',
  );
}

async function planNodes(list: List, sortRaw: string, filter: [string, string] | undefined, deep: boolean) {
  const parsed = parseSort(list.allowlist, sortRaw);
  if (!parsed.ok) throw parsed.error;
  return db.sql.begin(async (tx) => {
    await tx`set local enable_sort = off`;
    await tx`set local enable_seqscan = off`;
    const sql = tx as unknown as postgres.Sql;
    const conditions = [list.where(sql)];
    if (filter) conditions.push(sql`${sql(filter[0])} = ${filter[1]}`);
    const terms = sortExpressions(sql, parsed.value);
    if (deep) conditions.push(keysetPredicate(sql, terms, deepValues(terms)));
    let where = conditions[0] as postgres.Fragment;
    for (const condition of conditions.slice(1)) where = sql`${where} and ${condition}`;
    const [row] =
      await tx`explain (format json) select * from ${sql(list.table)} where ${where} order by ${orderBy(sql, parsed.value)} limit 21`;
    const nodes: string[] = [];
    const walk = (plan: { 'Node Type': string; Plans?: unknown[] }) => {
      nodes.push(plan['Node Type']);
      for (const child of plan.Plans ?? []) walk(child as typeof plan);
    };
    const [explained] = (row?.['QUERY PLAN'] ?? []) as { Plan: { 'Node Type': string } }[];
    if (!explained) throw new Error('EXPLAIN returned no plan');
    walk(explained.Plan);
    return nodes;
  });
}

describe('every served sort is an index scan, on the first page and deep ones', () => {
  for (const list of LISTS) {
    const keys = Object.keys(list.allowlist.fields).filter((key) => !list.unindexed?.includes(key));
    for (const key of keys) {
      for (const sort of [`-${key}`, key]) {
        it(`${list.name}, sort=${sort}`, async () => {
          for (const deep of [false, true]) {
            const nodes = await planNodes(list, sort, undefined, deep);
            expect(
              nodes.filter((node) => /Sort/.test(node)),
              `${nodes.join(' > ')} (deep: ${deep})`,
            ).toEqual([]);
          }
        });
      }
    }
    for (const filter of Object.entries(list.filters ?? {})) {
      it(`${list.name}, default sort, filtered by ${filter[0]}`, async () => {
        for (const deep of [false, true]) {
          const nodes = await planNodes(list, '-createdAt', filter, deep);
          expect(
            nodes.filter((node) => /Sort/.test(node)),
            `${nodes.join(' > ')} (deep: ${deep})`,
          ).toEqual([]);
        }
      });
    }
  }
});
