import { cursorBinding, encodeCursor } from '@holdfast/cursor-pagination';
import { migrate } from '@holdfast/db/migrate';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { parseSort, type SortAllowlist } from '@holdfast/sort-allowlist';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverySort } from '../src/api/webhook-schemas';
import { allMigrations } from '../src/db';
import { eventSort } from '../src/resources/events/schema';
import { orderSort, refundSort } from '../src/resources/orders/schema';
import { paymentMethodSort } from '../src/resources/payment-methods/schema';
import { paymentSort } from '../src/resources/payments/schema';
import { subscriptionSort } from '../src/resources/subscriptions/schema';
import { inboundEventSort } from '../src/routes/inbound-events';
import { pageStatement } from './page-statement';

// Every served single-key sort, in both directions, and the default sort under each indexed
// equality filter, is an index scan: with sorting disabled in the planner, the plan of the page
// statement paginate() sends (first page and a deep page, whose keyset predicate must bound the
// scan) has no Sort node. A missing or mismatched index (say `created_at desc` without NULLS LAST) shows up as a
// Sort, because PostgreSQL still sorts when no index provides the order.

interface List {
  readonly name: string;
  readonly table: string;
  /** The list's fixed conditions, as the route writes them. */
  readonly where: { readonly text: string; readonly values: readonly unknown[] };
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
    where: { text: 'account_id = $1', values: ['acct_1'] },
    allowlist: orderSort,
    unindexed: ['status'],
    filters: { status: 'pending' },
  },
  {
    name: 'refunds',
    table: 'holdfast_refunds',
    where: { text: 'account_id = $1 and order_id = $2', values: ['acct_1', 'ord_1'] },
    allowlist: refundSort,
    unindexed: ['amount'],
  },
  {
    name: 'payment methods',
    table: 'holdfast_payment_methods',
    where: { text: 'account_id = $1 and deleted_at is null', values: ['acct_1'] },
    allowlist: paymentMethodSort,
  },
  {
    name: 'payments',
    table: 'holdfast_payments',
    where: { text: 'account_id = $1', values: ['acct_1'] },
    allowlist: paymentSort,
    unindexed: ['status'],
    filters: { status: 'succeeded', order_id: 'ord_1' },
  },
  {
    name: 'subscriptions',
    table: 'holdfast_subscriptions',
    where: { text: 'account_id = $1', values: ['acct_1'] },
    allowlist: subscriptionSort,
    unindexed: ['status'],
  },
  {
    name: 'inbound events',
    table: 'holdfast_webhook_inbox',
    where: { text: 'tenant = $1', values: ['acct_1'] },
    allowlist: inboundEventSort,
    filters: { status: 'pending' },
  },
  {
    name: 'events',
    table: 'holdfast_events',
    where: { text: 'account_id = $1', values: ['acct_1'] },
    allowlist: eventSort,
  },
  {
    name: 'deliveries',
    table: 'holdfast_deliveries',
    where: { text: 'account_id = $1', values: ['acct_1'] },
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

const keyring = { current: 'k1', keys: { k1: 'a-test-secret-of-at-least-32-bytes!!' } };

/** A cursor deep in the list: a sample value for every term, the id last. */
async function deepCursor(list: List, sortRaw: string, filter: Record<string, string>): Promise<string> {
  const parsed = parseSort(list.allowlist, sortRaw);
  if (!parsed.ok) throw parsed.error;
  const values = parsed.value.keys.map(({ field }) =>
    field.type === 'timestamp' ? '2026-01-01 00:00:00+00' : field.type === 'number' ? '100' : 'a',
  );
  const binding = await cursorBinding({ sort: parsed.value.canonical, filter, scope: { account: 'acct_1' } });
  return encodeCursor(keyring, { binding, values: [...values, 'x_1'] });
}

async function planNodes(list: List, sortRaw: string, filter: [string, string] | undefined, deep: boolean) {
  const filters = filter ? { [filter[0]]: filter[1] } : {};
  const page = await pageStatement({
    from: list.table,
    where: list.where,
    allowlist: list.allowlist,
    sort: sortRaw,
    cursor: deep ? await deepCursor(list, sortRaw, filters) : undefined,
    filterColumns: filter ? { [filter[0]]: filter[0] } : {},
    filter: filters,
    binding: { account: 'acct_1' },
    keyring,
  });
  return db.sql.begin(async (tx) => {
    await tx`set local enable_sort = off`;
    await tx`set local enable_seqscan = off`;
    const [row] = await tx.unsafe(`explain (format json) ${page.text}`, page.values as never[]);
    // A sort straight over a Limit (a deep page merging its keyset branches' first rows) sorts
    // at most limit + 1 rows per branch: it is named `Sort of a Limit`, which the checks allow.
    const nodes: string[] = [];
    const walk = (plan: { 'Node Type': string; Plans?: unknown[] }) => {
      const children = (plan.Plans ?? []) as (typeof plan)[];
      const bounded =
        plan['Node Type'] === 'Sort' && children.every((child) => child['Node Type'] === 'Limit');
      nodes.push(bounded ? 'Sort of a Limit' : plan['Node Type']);
      for (const child of children) walk(child);
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
              nodes.filter((node) => /Sort/.test(node) && node !== 'Sort of a Limit'),
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
            nodes.filter((node) => /Sort/.test(node) && node !== 'Sort of a Limit'),
            `${nodes.join(' > ')} (deep: ${deep})`,
          ).toEqual([]);
        }
      });
    }
  }
});
