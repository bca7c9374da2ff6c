import { fromPostgres } from '@holdfast/db/postgres';
import { childDatabaseUrl, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leaseDue } from '../src/lease';
import { workerStatements } from '../src/sql/worker';
import { dueDeliveries, queueDatabase } from './fixtures/queue';

// A lease round reads the rows it leases, not the backlog, whatever PostgreSQL's statistics say.
// The statistics here are taken at 20 due deliveries (a fresh deployment) and the round's plan is
// cached then; then one endpoint gets 10,000 more in one burst, all due at the same instant. The
// plans PostgreSQL picks from those statistics scan whole tables or indexes on every round. The
// plan of the statement inside the lease function is read with auto_explain (PostgreSQL only: it
// needs a superuser); what a round costs in time is bench/delivery's EXPLAIN case.

const ACCOUNT = 'acct_plan';
const ROUND = 8;
const SMALL = 20;
let db: TestDatabase;
let client: postgres.Sql;
let endpointId = '';
let inserted = 0;
const notices: string[] = [];

beforeAll(async () => {
  if (!realPostgres) return;
  ({ db, endpointId } = await queueDatabase(ACCOUNT, 100));
  // One connection, so a plan a round caches is the one the next round uses.
  client = postgres(childDatabaseUrl(db), { max: 1, onnotice: (n) => notices.push(String(n.message)) });
});
afterAll(async () => {
  await client?.end();
  await db?.close();
});

/** `count` more due deliveries to the endpoint, all due at the same instant. */
async function due(count: number): Promise<void> {
  const from = inserted + 1;
  inserted += count;
  await dueDeliveries(client, { account: ACCOUNT, endpointId, tag: 'plan', from, to: inserted });
}

interface PlanNode {
  'Node Type': string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** Every node of a plan, with the rows it produced and the rows it read and threw away. */
function nodes(plan: PlanNode): { type: string; rows: number }[] {
  const own = {
    type: plan['Node Type'],
    rows: (plan['Actual Rows'] ?? 0) * (plan['Actual Loops'] ?? 1) + (plan['Rows Removed by Filter'] ?? 0),
  };
  return [own, ...(plan.Plans ?? []).flatMap(nodes)];
}

/** One lease round of `ROUND`, rolled back; with `explain`, the plan of the statement inside. */
async function round(explain: boolean): Promise<{ leased: number; plan: PlanNode | undefined }> {
  let result: { leased: number; plan: PlanNode | undefined } | undefined;
  notices.length = 0;
  await client
    .begin(async (tx) => {
      if (explain) {
        await tx.unsafe(`load 'auto_explain'`);
        await tx.unsafe(
          `select set_config('auto_explain.log_min_duration', '0', true), set_config('auto_explain.log_analyze', 'on', true),
                  set_config('auto_explain.log_timing', 'off', true), set_config('auto_explain.log_nested_statements', 'on', true),
                  set_config('auto_explain.log_level', 'notice', true), set_config('auto_explain.log_format', 'json', true)`,
        );
      }
      const rows = await leaseDue(
        { db: fromPostgres(tx), sql: workerStatements() },
        {
          owner: 'wrk_plan',
          limit: ROUND,
          perEndpoint: 100,
          at: new Date('2026-11-20T10:05:00Z'),
          leaseMs: 40_000,
          paused: [],
          endpointShare: 96,
          running: new Map(),
          // Answered attempts of this worker: each is looked up by its key, never by a scan.
          settled: [1, 2, 3].map((i) => ({ id: `dlv_plan_${i}`, attemptCount: 0 })),
        },
      );
      // The notice of the statement inside the function (the other is the outer call's).
      const inner = notices.find((n) => n.includes('holdfast_delivery_queue') && n.includes('settled'));
      const plan = inner
        ? (JSON.parse(inner.slice(inner.indexOf('{'))) as { Plan: PlanNode }).Plan
        : undefined;
      result = { leased: rows.length, plan };
      throw new Error('rollback');
    })
    .catch((error: unknown) => {
      if (!(error instanceof Error && error.message === 'rollback')) throw error;
    });
  if (!result) throw new Error('no round');
  return result;
}

describe.skipIf(!realPostgres)('the lease plan', () => {
  it('handles no more rows in any plan node beside 10,000 due deliveries than there are beside 20, with statistics from 20', async () => {
    await due(SMALL);
    await client`analyze holdfast_deliveries, holdfast_events, holdfast_delivery_queue`;
    // Enough rounds for the function's statement to settle on its generic plan.
    for (let i = 0; i < 6; i += 1) await round(false);
    const small = await round(true);
    await due(10_000);
    const large = await round(true);
    expect(small.leased).toBe(ROUND);
    expect(large.leased).toBe(ROUND);
    if (!small.plan || !large.plan) throw new Error('auto_explain gave no plan of the inner statement');
    // Beside 20 due, no node handles more than a few dozen rows; a plan that scanned the backlog
    // would show a node with thousands beside 10,000. (The exact counts can differ by the index
    // entries earlier rolled-back rounds left, so the bound is the size of the small table.)
    const most = (plan: PlanNode) => Math.max(...nodes(plan).map((n) => n.rows));
    expect(most(small.plan)).toBeLessThanOrEqual(SMALL);
    expect(nodes(large.plan).filter((n) => n.rows > SMALL)).toEqual([]);
  });
});
