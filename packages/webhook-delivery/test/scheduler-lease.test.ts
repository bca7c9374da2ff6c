import type { Db } from '@holdfast/db';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoint, migrations } from '../src/index';
import { type LeasedRow, leaseDue } from '../src/lease';
import { type AttemptResult, writeOutcomes } from '../src/outcomes';
import { type EndpointPacing, nextLimit, pickRound, roundCandidates, roundParts } from '../src/pacing';
import { workerStatements } from '../src/sql/worker';
import { endPools, pgQueue } from './fixtures/db';
import { dueDeliveries } from './fixtures/queue';

afterAll(endPools);

// The scheduler's model properties (scheduler.test.ts) drive pickRound, the pure statement of the
// lease round's choice. Here the lease statement itself, on PGlite or PostgreSQL, makes the same
// choice on the same pacing rows: per endpoint, as many deliveries as pickRound. Limits, tokens
// and times are multiples of binary fractions, so float4 columns hold them exactly.

const ACCOUNT = 'acct_lease_rule';
const AT = Date.parse('2026-11-20T11:00:00Z');

interface Case {
  ceiling: number;
  share: number;
  endpoints: {
    limit: number | null;
    charged: number;
    released: number;
    pausedMs: number | null;
    maxPerSecond: number | null;
    tokens: number | null;
    tokensAgo: number;
    due: number;
    running: number;
    pausedHere: boolean;
  }[];
  limit: number;
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  ceiling: fc.integer({ min: 1, max: 12 }),
  share: fc.integer({ min: 1, max: 12 }),
  endpoints: fc.array(
    fc.record({
      limit: fc.option(
        fc.integer({ min: 4, max: 32 }).map((q) => q / 4),
        { nil: null },
      ),
      charged: fc.integer({ min: 0, max: 8 }),
      released: fc.integer({ min: 0, max: 8 }),
      pausedMs: fc.option(
        fc.integer({ min: -8, max: 8 }).map((k) => k * 125),
        { nil: null },
      ),
      maxPerSecond: fc.option(fc.integer({ min: 1, max: 80 }), { nil: null }),
      tokens: fc.option(
        fc.integer({ min: 0, max: 16 }).map((h) => h / 2),
        { nil: null },
      ),
      tokensAgo: fc.integer({ min: 0, max: 24 }).map((k) => k * 125),
      due: fc.integer({ min: 0, max: 12 }),
      running: fc.integer({ min: 0, max: 6 }),
      pausedHere: fc.boolean(),
    }),
    { minLength: 1, maxLength: 5 },
  ),
  limit: fc.integer({ min: 1, max: 24 }),
});

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
});
afterAll(() => db.close());

/** The case's endpoints, pacing rows and due deliveries; returns their ids in order. */
async function arrange(c: Case): Promise<string[]> {
  await db.sql`truncate holdfast_webhook_endpoints, holdfast_events, holdfast_delivery_attempts cascade`;
  const ids: string[] = [];
  for (const [i, e] of c.endpoints.entries()) {
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account: ACCOUNT, url: 'http://127.0.0.1:1024/hook', maxPerSecond: e.maxPerSecond },
      { allowPrivateDestinations: true, concurrencyMax: c.ceiling },
    );
    ids.push(endpoint.id);
    // Released places never exceed charged ones.
    const released = Math.min(e.released, e.charged);
    await db.sql`
      update holdfast_endpoint_pacing set
        in_flight = ${e.charged}, concurrency_limit = ${e.limit},
        paused_until = ${e.pausedMs === null ? null : new Date(AT + e.pausedMs)},
        tokens = ${e.tokens}, tokens_at = ${e.tokens === null ? null : new Date(AT - e.tokensAgo)}
      where endpoint_id = ${endpoint.id}`;
    await db.sql`
      insert into holdfast_endpoint_releases (endpoint_id, stripe, released) values (${endpoint.id}, 3, ${released})`;
    if (e.due > 0) {
      await dueDeliveries(db.sql, {
        account: ACCOUNT,
        endpointId: endpoint.id,
        tag: `r${i}`,
        from: 1,
        to: e.due,
      });
    }
  }
  return ids;
}

/**
 * Runs the lease statement on the case's rows and checks it against pickRound; returns whether
 * the case had more candidates than the round's limit (the branch where the statement picks).
 */
async function leaseMatchesPickRound(c: Case): Promise<boolean> {
  const ids = await arrange(c);
  const running = new Map(ids.map((id, i) => [id, c.endpoints[i]?.running ?? 0]));
  const paused = ids.filter((_, i) => c.endpoints[i]?.pausedHere);
  const request = { at: AT, limit: c.limit, perEndpoint: c.ceiling, share: c.share, paused, running };
  const pacing: EndpointPacing[] = c.endpoints.map((e, i) => ({
    id: ids[i] ?? '',
    limit: e.limit,
    inFlight: e.charged - Math.min(e.released, e.charged),
    pausedUntil: e.pausedMs === null ? null : AT + e.pausedMs,
    maxPerSecond: e.maxPerSecond,
    tokens: e.tokens,
    tokensAt: e.tokens === null ? null : AT - e.tokensAgo,
    due: e.due,
  }));
  const expected = pickRound(pacing, request);
  const rows = await leaseDue(pgQueue(db), {
    owner: 'wrk_rule',
    limit: c.limit,
    perEndpoint: c.ceiling,
    at: new Date(AT),
    leaseMs: 60_000,
    paused,
    endpointShare: c.share,
    running,
  });
  const got = new Map<string, number>();
  for (const row of rows) got.set(row.endpoint_id, (got.get(row.endpoint_id) ?? 0) + 1);
  const sum = (m: ReadonlyMap<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  const candidates = roundCandidates(pacing, request);
  if (candidates.length <= c.limit) {
    // Every candidate is served: the same parts, cut at the limit (the statement cuts
    // anywhere, pickRound in order; uncut, they match exactly).
    const parts = roundParts(candidates, request);
    expect(rows.length).toBe(sum(expected));
    expect(rows.length).toBe(Math.min(c.limit, sum(parts)));
    for (const [id, n] of got) expect(n).toBeLessThanOrEqual(parts.get(id) ?? 0);
    if (sum(parts) <= c.limit) expect(new Map([...got].sort())).toEqual(new Map([...expected].sort()));
  } else {
    // More candidates than the limit: a random `limit` of them, one delivery each. Every
    // candidate can start one (room, share, a token, a due delivery), so exactly `limit`.
    expect(sum(expected)).toBe(c.limit);
    expect(rows.length).toBe(c.limit);
    expect(got.size).toBe(c.limit);
    const ids = new Set(candidates.map((e) => e.id));
    for (const [id, n] of got) {
      expect(ids.has(id)).toBe(true);
      expect(n).toBe(1);
    }
  }
  return candidates.length > c.limit;
}

describe('the lease statement', () => {
  it('starts per endpoint what pickRound starts, given the same pacing rows', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        await leaseMatchesPickRound(c);
      }),
      { numRuns: 40 },
    );
  });

  it('starts exactly `limit` deliveries, one per endpoint, when more endpoints could start one', async () => {
    // Rare in the cases above (at most five endpoints, a limit up to 24): every endpoint here
    // can start one (due work, room, no pause, no rate), and the limit is below their number.
    const crowded: fc.Arbitrary<Case> = fc.record({
      ceiling: fc.integer({ min: 1, max: 12 }),
      share: fc.integer({ min: 1, max: 12 }),
      endpoints: fc.array(
        fc.record({
          limit: fc.constant(null),
          charged: fc.constant(0),
          released: fc.constant(0),
          pausedMs: fc.option(
            fc.integer({ min: -8, max: 0 }).map((k) => k * 125),
            { nil: null },
          ),
          maxPerSecond: fc.constant(null),
          tokens: fc.constant(null),
          tokensAgo: fc.constant(0),
          due: fc.integer({ min: 1, max: 4 }),
          running: fc.constant(0),
          pausedHere: fc.constant(false),
        }),
        { minLength: 3, maxLength: 5 },
      ),
      limit: fc.integer({ min: 1, max: 2 }),
    });
    await fc.assert(
      fc.asyncProperty(crowded, async (c) => {
        expect(await leaseMatchesPickRound(c)).toBe(true);
      }),
      { numRuns: 15 },
    );
  });
});

describe('the outcome statement', () => {
  it('steps the adaptive limit as nextLimit does, and keeps the latest pause', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 8 }),
        fc.option(fc.integer({ min: 4, max: 32 }), { nil: null }),
        fc.option(fc.integer({ min: -4, max: 8 }), { nil: null }),
        fc.array(
          fc.record({
            // Overload is rarer than success, so batches without it are common enough to test growth.
            congested: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
            fast: fc.boolean(),
            pause: fc.option(fc.integer({ min: -4, max: 8 }), { nil: null }),
          }),
          { minLength: 1, maxLength: 6 },
        ),
        async (ceiling, quarters, pausedSteps, answers) => {
          const limit = quarters === null ? null : Math.min(quarters / 4, ceiling);
          const pausedUntil = pausedSteps === null ? null : AT + pausedSteps * 125;
          const [id] = await arrange({
            ceiling,
            share: 8,
            limit: 8,
            endpoints: [
              {
                limit: null,
                charged: 0,
                released: 0,
                pausedMs: null,
                maxPerSecond: null,
                tokens: null,
                tokensAgo: 0,
                due: answers.length,
                running: 0,
                pausedHere: false,
              },
            ],
          });
          const rows = await leaseDue(pgQueue(db), {
            owner: 'wrk_rule',
            limit: answers.length,
            perEndpoint: 8,
            at: new Date(AT),
            leaseMs: 60_000,
            paused: [],
            endpointShare: 8,
            running: new Map(),
          });
          expect(rows).toHaveLength(answers.length);
          await db.sql`
            update holdfast_endpoint_pacing set concurrency_limit = ${limit},
              paused_until = ${pausedUntil === null ? null : new Date(pausedUntil)}
            where endpoint_id = ${id ?? ''}`;
          await writeOutcomes(pgQueue(db), {
            owner: 'wrk_rule',
            stripe: 1,
            perEndpoint: ceiling,
            batch: rows.map((row, i) => {
              const a = answers[i] ?? { congested: false, fast: false, pause: null };
              return {
                row,
                status: 204,
                error: null,
                prefix: '',
                outcome: 'succeeded' as const,
                nextStatus: 'succeeded' as const,
                nextAttemptAt: null,
                started: AT,
                finished: AT + 1,
                congested: a.congested,
                fast: a.fast,
                pauseUntil: a.pause === null ? null : new Date(AT + a.pause * 125),
              };
            }),
          });
          const [row] = await db.sql<{ limit: number | null; paused: Date | null }[]>`
            select concurrency_limit as limit, paused_until as paused from holdfast_endpoint_pacing
            where endpoint_id = ${id ?? ''}`;
          const batch = {
            congested: answers.some((a) => a.congested),
            fast: answers.filter((a) => a.fast).length,
          };
          const expected =
            batch.congested || batch.fast > 0
              ? nextLimit(limit, ceiling, batch)
              : Math.min(limit ?? ceiling, ceiling);
          expect(Math.min(row?.limit ?? ceiling, ceiling)).toBeCloseTo(expected, 5);
          const pauses = answers.flatMap((a) => (a.pause === null ? [] : [AT + a.pause * 125]));
          const latest = Math.max(pausedUntil ?? Number.NEGATIVE_INFINITY, ...pauses);
          expect(row?.paused?.getTime() ?? null).toBe(Number.isFinite(latest) ? latest : null);
        },
      ),
      { numRuns: 25 },
    );
  });

  // Two connections at once: PostgreSQL only (PGlite has one session).
  it.skipIf(!realPostgres)(
    'leases from an endpoint under its ceiling while a batch of its fast successes is being committed',
    async () => {
      const id = await underCeiling();
      const [first] = await round(1);
      if (!first) throw new Error('nothing leased');
      const sql = workerStatements();
      let leasedMeanwhile: number | undefined;
      // The outcome statement runs in a transaction held open (as a slow commit holds it) while
      // a round runs on another connection: the round must not find the endpoint's pacing row
      // locked. The increase that follows the outcomes is checked to have happened after.
      await db.sql.begin(async (tx) => {
        const txDb = fromPostgres(tx);
        const inTx: Db = {
          async query<Row>(text: string, values?: readonly unknown[]): Promise<Row[]> {
            const rows = await txDb.query<Row>(text, values);
            if (text === sql.writeOutcomes) leasedMeanwhile = (await round(1)).length;
            return rows;
          },
        };
        await writeOutcomes(
          { db: inTx, sql },
          {
            owner: 'wrk_rule',
            stripe: 1,
            perEndpoint: 8,
            batch: [fastSuccess(first)],
          },
        );
      });
      expect(leasedMeanwhile).toBe(1);
      const [pacing] = await db.sql<{ limit: number }[]>`
        select concurrency_limit as limit from holdfast_endpoint_pacing where endpoint_id = ${id}`;
      expect(pacing?.limit).toBeCloseTo(nextLimit(2, 8, { congested: false, fast: 1 }), 5);
    },
  );

  it.skipIf(!realPostgres)(
    'carries an increase whose pacing row is locked to the next batch, without waiting for the lock',
    async () => {
      const id = await underCeiling();
      const [first, second] = await round(2);
      if (!first || !second) throw new Error('nothing leased');
      const carry = new Map<string, number>();
      // A lease round (or another worker) holds the row: the increase passes over it at once (a
      // wait would hang here until the test times out) and keeps its count.
      await db.sql.begin(async (tx) => {
        await tx`select 1 from holdfast_endpoint_pacing where endpoint_id = ${id} for update`;
        await writeOutcomes(pgQueue(db), {
          owner: 'wrk_rule',
          stripe: 1,
          perEndpoint: 8,
          batch: [fastSuccess(first)],
          carry,
        });
      });
      expect([...carry]).toEqual([[id, 1]]);
      await writeOutcomes(pgQueue(db), {
        owner: 'wrk_rule',
        stripe: 1,
        perEndpoint: 8,
        batch: [fastSuccess(second)],
        carry,
      });
      expect(carry.size).toBe(0);
      const [pacing] = await db.sql<{ limit: number }[]>`
        select concurrency_limit as limit from holdfast_endpoint_pacing where endpoint_id = ${id}`;
      expect(pacing?.limit).toBeCloseTo(nextLimit(2, 8, { congested: false, fast: 2 }), 5);
    },
  );
});

/** One endpoint with three due deliveries, its limit 2 under its ceiling 8; answers its id. */
async function underCeiling(): Promise<string> {
  const [id] = await arrange({
    ceiling: 8,
    share: 8,
    limit: 8,
    endpoints: [
      {
        limit: 2,
        charged: 0,
        released: 0,
        pausedMs: null,
        maxPerSecond: null,
        tokens: null,
        tokensAgo: 0,
        due: 3,
        running: 0,
        pausedHere: false,
      },
    ],
  });
  if (!id) throw new Error('no endpoint');
  return id;
}

/** A lease round at AT with room for `limit`, on the worker's connection. */
function round(limit: number) {
  return leaseDue(pgQueue(db), {
    owner: 'wrk_rule',
    limit,
    perEndpoint: 8,
    at: new Date(AT),
    leaseMs: 60_000,
    paused: [],
    endpointShare: 8,
    running: new Map(),
  });
}

/** A fast 204 for a leased row. */
function fastSuccess(row: LeasedRow): AttemptResult {
  return {
    row,
    status: 204,
    error: null,
    prefix: '',
    outcome: 'succeeded',
    nextStatus: 'succeeded',
    nextAttemptAt: null,
    started: AT,
    finished: AT + 1,
    congested: false,
    fast: true,
    pauseUntil: null,
  };
}
