import type { TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leaseStatement } from '../src/lease';
import { dueDeliveries, queueDatabase } from './fixtures/queue';

// A lease round reads the rows it leases, not the backlog, whatever PostgreSQL's statistics say.
// The statistics here are taken at 20 due deliveries (a fresh deployment) and the round's plan is
// cached then; then one endpoint gets 10,000 more in one burst, all due at the same instant. The
// plans PostgreSQL picks from those statistics scan whole tables on every round.

const ACCOUNT = 'acct_plan';
let db: TestDatabase;
let endpointId = '';
let inserted = 0;
// Every statement on one connection, so a plan a round caches is the one the next round uses.
let reserved: Awaited<ReturnType<TestDatabase['sql']['reserve']>> | undefined;
const connection = async () => {
  reserved ??= await db.sql.reserve();
  return reserved;
};

beforeAll(async () => {
  ({ db, endpointId } = await queueDatabase(ACCOUNT, 100));
});
afterAll(async () => {
  reserved?.release();
  await db?.close();
});

/** `count` more due deliveries to the endpoint, all due at the same instant. */
async function due(count: number): Promise<void> {
  const from = inserted + 1;
  inserted += count;
  await dueDeliveries(await connection(), { account: ACCOUNT, endpointId, tag: 'plan', from, to: inserted });
}

/** Shared buffers one lease round of 8 reads and writes, rolled back. */
async function leaseBuffers(): Promise<{ buffers: number; leased: number }> {
  const tx = await connection();
  await tx`begin`;
  try {
    const [row] = await tx`explain (analyze, buffers, format json) ${leaseStatement(tx, {
      owner: 'wrk_plan',
      limit: 8,
      perEndpoint: 100,
      at: new Date('2026-11-20T10:05:00Z'),
      leaseMs: 40_000,
      paused: [],
      endpointShare: 96,
      running: new Map(),
      // Answered attempts of this worker: each is looked up by its key, never by a scan.
      settled: [1, 2, 3].map((i) => ({ id: `dlv_plan_${i}`, attemptCount: 0 })),
    })}`;
    const [plan] = (row?.['QUERY PLAN'] ?? []) as { Plan: Record<string, number> }[];
    return {
      buffers: (plan?.Plan['Shared Hit Blocks'] ?? 0) + (plan?.Plan['Shared Read Blocks'] ?? 0),
      leased: plan?.Plan['Actual Rows'] ?? 0,
    };
  } finally {
    await tx`rollback`;
  }
}

describe('the lease plan', () => {
  it('reads about as much beside 10,000 due deliveries as beside 20, with statistics from 20', async () => {
    await due(20);
    await (await connection())`analyze holdfast_deliveries, holdfast_events`;
    // Enough rounds for a prepared plan to settle on its generic plan.
    for (let i = 0; i < 6; i += 1) await leaseBuffers();
    // The lesser of two rounds: a round that has to plan again counts the catalog reads of its
    // planning as buffers too (a cached plan is dropped when any session's DDL overflows this
    // session's cache invalidations, as the other test files' schemas do in CI), and what is
    // measured here is what executing the plan reads.
    const round = async () => {
      const [a, b] = [await leaseBuffers(), await leaseBuffers()];
      return a.buffers <= b.buffers ? a : b;
    };
    const small = await round();
    await due(10_000);
    const large = await round();
    expect(small.leased).toBe(8);
    expect(large.leased).toBe(8);
    // 500 times the backlog. Walking the indexes reads a little more (deeper indexes, and the
    // entries the rolled-back rounds left): about 2.3 times here. The plans PostgreSQL picks from
    // the stale statistics scan the tables: 5.4 times.
    expect(large.buffers).toBeLessThan(small.buffers * 3);
  });
});
