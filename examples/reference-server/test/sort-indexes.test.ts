import { cursorBinding, encodeCursor } from '@holdfast/cursor-pagination';
import { migrate } from '@holdfast/db/migrate';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { acceptedSorts, parseSort, type SortAllowlist } from '@holdfast/sort-allowlist';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverySort } from '../src/api/webhook-schemas';
import { allMigrations } from '../src/db';
import { orderSort } from '../src/resources/orders/schema';
import { paymentSort } from '../src/resources/payments/schema';
import { subscriptionSort } from '../src/resources/subscriptions/schema';
import { pageStatement } from './page-statement';

// Every sort the allowlists accept (walked from the allowlists themselves, so a new alias or
// sort without an index fails here), alone and under each equality filter of its list, on the
// first page and on a deep one: the exact statement paginate() sends reads an index in the
// order asked. With full sorts and sequential scans priced out, a missing or mismatched index
// shows up as a Seq Scan, a Bitmap scan (no order) or a Sort over a scan. The sorts allowed are
// of a few rows: over a Limit (a deep page merges each keyset branch's first rows, at most
// limit + 1 from each), or of each run of equal values of a fine-grained key (a longer sort
// served by the index of its prefix, `-createdAt,total` by `created_at desc, id desc`).

interface List {
  readonly name: string;
  readonly from: string;
  readonly where: { readonly text: string; readonly values: readonly unknown[] };
  readonly allowlist: SortAllowlist;
  readonly filterColumns: Readonly<Record<string, string>>;
  /** Each filter with a sample value, tried one at a time. */
  readonly filters: Readonly<Record<string, string>>;
}

const account = 'acct_1';
const LISTS: readonly List[] = [
  {
    name: 'orders',
    from: 'holdfast_orders',
    where: { text: 'account_id = $1', values: [account] },
    allowlist: orderSort,
    filterColumns: { status: 'status' },
    filters: { status: 'shipped' },
  },
  {
    name: 'payments',
    from: 'holdfast_payments',
    where: { text: 'account_id = $1', values: [account] },
    allowlist: paymentSort,
    filterColumns: { status: 'status', order: 'order_id' },
    filters: { status: 'succeeded', order: 'ord_1' },
  },
  {
    name: 'subscriptions',
    from: 'holdfast_subscriptions',
    where: { text: 'account_id = $1', values: [account] },
    allowlist: subscriptionSort,
    filterColumns: {},
    filters: {},
  },
  {
    name: 'deliveries',
    from: 'holdfast_deliveries',
    where: {
      text: 'account_id = $1 and event_type = any($2::text[])',
      values: [account, ['order.created', 'payment.succeeded']],
    },
    allowlist: deliverySort,
    filterColumns: { status: 'status', endpoint: 'endpoint_id', eventType: 'event_type' },
    filters: { status: 'dead', endpoint: 'we_1', eventType: 'order.created' },
  },
];

const keyring = { current: 'k1', keys: { k1: 'a-test-secret-of-at-least-32-bytes!!' } };

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ max: 1 });
  await migrate(fromPostgres(db.sql), await allMigrations());
});
afterAll(() => db.close());

/** A cursor deep in the list: a sample value for every term, the id last. */
async function deepCursor(list: List, sort: string, filter: Record<string, string>): Promise<string> {
  const parsed = parseSort(list.allowlist, sort);
  if (!parsed.ok) throw parsed.error;
  const values = parsed.value.keys.map(({ field }) =>
    field.type === 'timestamp' ? '2026-01-01 00:00:00+00' : field.type === 'enum' ? '2' : '100',
  );
  const binding = await cursorBinding({
    sort: parsed.value.canonical,
    filter,
    scope: { account, resource: list.name },
  });
  return encodeCursor(keyring, { binding, values: [...values, 'x_1'] });
}

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Index Name'?: string;
  readonly 'Presorted Key'?: readonly string[];
  readonly 'Index Cond'?: string;
  readonly Plans?: readonly PlanNode[];
}

/**
 * What is wrong with a plan: unordered scans, deep pages that do not start at the cursor, and
 * sorts of more than a few rows. A sort is of a
 * few rows when a Limit bounds its input (a deep page merging its keyset branches), when it is
 * an incremental sort whose presorted keys include a fine-grained column (it sorts each run of
 * equal values), or when the scan under it fixes a fine-grained column by equality.
 */
function planFaults(
  root: PlanNode,
  fine: readonly string[],
  deep: boolean,
): { faults: string[]; indexes: string[] } {
  const faults: string[] = [];
  const indexes: string[] = [];
  const names = (text: string) => fine.some((column) => new RegExp(`\\b${column}\\b`).test(text));
  const fixes = (cond: string) => fine.some((column) => new RegExp(`\\b${column} = `).test(cond));
  const walk = (node: PlanNode, sortAbove: string | undefined) => {
    const type = node['Node Type'];
    if (type === 'Seq Scan' || type.startsWith('Bitmap')) faults.push(type);
    if (type === 'Index Scan' || type === 'Index Only Scan') {
      indexes.push(node['Index Name'] ?? '?');
      const cond = node['Index Cond'] ?? '';
      if (sortAbove && !fixes(cond)) {
        faults.push(`${sortAbove} over ${type} using ${node['Index Name']} (${cond})`);
      }
      // A deep page starts at the cursor: its index condition carries a bound of the cursor
      // (or fixes a fine-grained key), else the scan starts at the first row of the order and
      // filters its way to the cursor.
      if (deep && !(/[<>]|IS (NOT )?NULL/.test(cond) || fixes(cond))) {
        faults.push(`deep page scans ${node['Index Name']} from the start (${cond})`);
      }
    }
    let below = sortAbove;
    if (type === 'Limit') below = undefined;
    else if (type === 'Sort') below = type;
    else if (type === 'Incremental Sort' && !(node['Presorted Key'] ?? []).some(names)) {
      below = `${type} presorted by ${(node['Presorted Key'] ?? []).join(', ')}`;
    }
    for (const child of node.Plans ?? []) walk(child, below);
  };
  walk(root, undefined);
  // A plan that reads no relation at all is fine: on a partitioned table the planner refutes
  // self-contradictory branches (a status filter beside a cursor of another status) outright.
  const reads = (node: PlanNode): boolean =>
    node['Node Type'].endsWith('Scan') || (node.Plans ?? []).some(reads);
  if (indexes.length === 0 && reads(root)) faults.push('no index scan');
  return { faults, indexes };
}

/** The plan of the page statement paginate() sends for this sort, filter and cursor. */
async function planOf(list: List, sort: string, filter: Record<string, string>, deep: boolean) {
  const sent = await pageStatement({
    from: list.from,
    where: list.where,
    allowlist: list.allowlist,
    sort,
    cursor: deep ? await deepCursor(list, sort, filter) : undefined,
    filterColumns: list.filterColumns,
    filter,
    binding: { account, resource: list.name },
    keyring,
  });
  return db.sql.begin(async (tx) => {
    await tx`set local enable_seqscan = off`;
    await tx`set local enable_bitmapscan = off`;
    await tx`set local enable_sort = off`;
    const [row] = await tx.unsafe(`explain (format json) ${sent.text}`, sent.values as never[]);
    const [explained] = (row?.['QUERY PLAN'] ?? []) as { Plan: PlanNode }[];
    if (!explained) throw new Error('EXPLAIN returned no plan');
    const fine = Object.values(list.allowlist.fields)
      .filter((field) => field.fineGrained === true)
      .map((field) => field.column);
    return { ...planFaults(explained.Plan, fine, deep), text: sent.text };
  });
}

describe('every accepted sort of every list is read from an index, first page and deep', () => {
  for (const list of LISTS) {
    const filters: Record<string, string>[] = [
      {},
      ...Object.entries(list.filters).map(([name, value]) => ({ [name]: value })),
    ];
    for (const sort of acceptedSorts(list.allowlist)) {
      it(`${list.name}, sort=${sort}`, async () => {
        for (const filter of filters) {
          for (const deep of [false, true]) {
            const { faults, indexes, text } = await planOf(list, sort, filter, deep);
            expect(faults, `${JSON.stringify(filter)} deep=${deep} ${indexes.join(',')}\n${text}`).toEqual(
              [],
            );
          }
        }
      });
    }
  }

  it('no sort the contract allows is refused: every list declares its indexes and they serve every combination', () => {
    // Up to three distinct keys, each in two directions: n·2 + n(n-1)·4 + n(n-1)(n-2)·8.
    const combinations = (n: number) => n * 2 + n * (n - 1) * 4 + n * (n - 1) * (n - 2) * 8;
    for (const list of LISTS) {
      expect(list.allowlist.indexed, list.name).toBeDefined();
      expect(acceptedSorts(list.allowlist), list.name).toHaveLength(
        combinations(list.allowlist.aliases.length),
      );
    }
  });
});
