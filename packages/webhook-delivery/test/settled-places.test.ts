import type { TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LeasedRow, leaseDue } from '../src/lease';
import { type AttemptResult, writeOutcomes } from '../src/outcomes';
import { endPools, pgQueue } from './fixtures/db';
import { dueDeliveries, queueDatabase } from './fixtures/queue';

afterAll(endPools);

// An attempt that has its answer no longer holds an in-flight place, for the worker that ran it,
// until its outcome is written; the place is counted from the lease itself, in the lease
// statement's snapshot, so it is freed once and only for its own worker (migration 007).

const ACCOUNT = 'acct_settled';
const AT = new Date('2026-11-20T10:05:00Z');
let db: TestDatabase;
let endpointId = '';

beforeAll(async () => {
  ({ db, endpointId } = await queueDatabase(ACCOUNT, 4));
  await dueDeliveries(db.sql, { account: ACCOUNT, endpointId, tag: 'settled', from: 1, to: 20 });
});
afterAll(async () => {
  await db?.close();
});

const settledOf = (rows: readonly LeasedRow[]) =>
  rows.map((row) => ({ id: row.id, attemptCount: row.attempt_count }));

function lease(
  owner: string,
  settled: readonly { id: string; attemptCount: number }[] = [],
): Promise<LeasedRow[]> {
  return leaseDue(pgQueue(db), {
    owner,
    limit: 10,
    perEndpoint: 4,
    at: AT,
    leaseMs: 40_000,
    paused: [],
    endpointShare: 10,
    running: new Map(),
    settled,
  });
}

function succeeded(row: LeasedRow): AttemptResult {
  const finished = AT.getTime() + 5;
  return {
    row,
    status: 204,
    error: null,
    prefix: '',
    outcome: 'succeeded',
    nextStatus: 'succeeded',
    nextAttemptAt: null,
    started: AT.getTime(),
    finished,
    congested: false,
    fast: true,
    pauseUntil: null,
  };
}

describe('places of answered attempts', () => {
  it('are free for their own worker until the outcome is written, once, and never for another', async () => {
    const first = await lease('wrk_a');
    expect(first).toHaveLength(4);
    // The bound: nothing more while four are in flight.
    expect(await lease('wrk_a')).toHaveLength(0);

    // Two have answered: worker b may not use their places, nor may a wrong attempt count.
    const answered = first.slice(0, 2);
    expect(await lease('wrk_b', settledOf(answered))).toHaveLength(0);
    expect(
      await lease(
        'wrk_a',
        answered.map((row) => ({ id: row.id, attemptCount: row.attempt_count + 1 })),
      ),
    ).toHaveLength(0);
    // Worker a may: two more, and no third.
    const second = await lease('wrk_a', settledOf(answered));
    expect(second).toHaveLength(2);
    expect(await lease('wrk_a', settledOf(answered))).toHaveLength(0);

    // Once their outcome is written, the same two free nothing more (their places were released
    // by the outcome statement itself): still four in flight, no room.
    await writeOutcomes(pgQueue(db), {
      owner: 'wrk_a',
      stripe: 0,
      perEndpoint: 4,
      batch: answered.map(succeeded),
    });
    expect(await lease('wrk_a', settledOf(answered))).toHaveLength(0);
    expect(await lease('wrk_b')).toHaveLength(0);

    // The other six are written: four places are free for anyone.
    await writeOutcomes(pgQueue(db), {
      owner: 'wrk_a',
      stripe: 1,
      perEndpoint: 4,
      batch: [...first.slice(2), ...second].map(succeeded),
    });
    expect(await lease('wrk_b', settledOf(answered))).toHaveLength(4);
  });
});
