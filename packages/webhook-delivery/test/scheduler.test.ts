import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bucketTokens,
  type EndpointPacing,
  nextLimit,
  pickRound,
  roundCandidates,
  roundParts,
} from '../src/pacing';
import { Scheduler, type Scheduler as SchedulerType } from '../src/scheduler';

// The scheduler on a fake clock, without PostgreSQL or HTTP: a model of W workers (each its own
// Scheduler) sharing N endpoints, each with a latency, a cycle of answers (successes, failures,
// overload, Retry-After) and maybe a maxPerSecond. Every simulated millisecond: answers arrive
// and are judged, the outcomes answered a millisecond earlier are written (the outcome
// statement's rules: releases, nextLimit, pauses), then each worker whose wait is over runs a
// lease round (the lease statement's rules: pickRound on the shared pacing). Every start is
// logged; the properties are checked on the log and on the model's state after each round, in
// counts and order of simulated milliseconds.

interface Reply {
  /** undefined: a timeout or connection error. */
  status: number | undefined;
  retryAfterMs?: number;
}

interface EndpointModel {
  latency: number;
  replies: readonly Reply[];
  maxPerSecond: number | null;
  backlog: number;
  /** The endpoint's account (absent: no account rules apply to it). */
  account?: number;
  /** Delivery i falls due at i times this (absent: all at 0). */
  dueEvery?: number;
}

interface Config {
  workers: number;
  concurrency: number;
  ceiling: number;
  seed: number;
  /** The scheduler's account share (absent: none). */
  accountShare?: number;
}

interface Start {
  at: number;
  worker: number;
  e: number;
}

const TIMEOUT_MS = 10_000;
const SLOW_MS = 250;
const MAX_RETRY_AFTER = 400;
const SCHEDULE = [20, 40];

const replyArb: fc.Arbitrary<Reply> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ status: 204 }) },
  { weight: 1, arbitrary: fc.constantFrom<Reply>({ status: 500 }, { status: 503 }, { status: undefined }) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: MAX_RETRY_AFTER }).map((ms) => ({ status: 429, retryAfterMs: ms })),
  },
);

const endpointArb: fc.Arbitrary<EndpointModel> = fc.record({
  latency: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 200, max: 6_000 })),
  replies: fc.array(replyArb, { minLength: 1, maxLength: 6 }),
  maxPerSecond: fc.option(fc.integer({ min: 1, max: 300 }), { nil: null, freq: 3 }),
  backlog: fc.integer({ min: 0, max: 20 }),
});

const configArb: fc.Arbitrary<Config> = fc.record({
  workers: fc.integer({ min: 1, max: 3 }),
  concurrency: fc.integer({ min: 1, max: 16 }),
  ceiling: fc.integer({ min: 1, max: 8 }),
  seed: fc.integer({ min: 0, max: 2 ** 31 }),
});

interface Attempt {
  id: string;
  worker: number;
  e: number;
  started: number;
  answerAt: number;
  answered: boolean;
  /** Answered with a place freed at once (not overload news). */
  settled: boolean;
  writeAt: number | null;
  reply: Reply;
  congested: boolean;
  fast: boolean;
  pauseUntil: number | null;
  next: 'succeeded' | 'failed' | 'dead' | null;
  nextAt: number | null;
}

interface Delivery {
  id: string;
  e: number;
  dueAt: number;
  attemptCount: number;
  state: 'due' | 'leased' | 'succeeded' | 'dead';
}

interface Pacing {
  limit: number | null;
  /** Places charged by leases and not yet released by a written outcome. */
  charged: number;
  pausedUntil: number | null;
  tokens: number | null;
  tokensAt: number | null;
}

function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
}

/** Runs the model to the end (every delivery succeeded or dead) or the horizon. */
function simulate(endpoints: readonly EndpointModel[], config: Config) {
  let clock = 0;
  const random = prng(config.seed);
  const workers = Array.from({ length: config.workers }, () => ({
    scheduler: new Scheduler({
      concurrency: config.concurrency,
      perEndpoint: config.ceiling,
      timeoutMs: TIMEOUT_MS,
      pollMs: 100,
      schedule: SCHEDULE,
      now: () => clock,
      random: () => 0.5,
      accountShare: config.accountShare,
    }),
    nextRoundAt: 0,
  }));
  const pacing: Pacing[] = endpoints.map(() => ({
    limit: null,
    charged: 0,
    pausedUntil: null,
    tokens: null,
    tokensAt: null,
  }));
  const deliveries: Delivery[] = endpoints.flatMap((model, e) =>
    Array.from({ length: model.backlog }, (_, i) => ({
      id: `dlv_${e}_${i}`,
      e,
      dueAt: i * (model.dueEvery ?? 0),
      attemptCount: 0,
      state: 'due' as const,
    })),
  );
  const byId = new Map(deliveries.map((d) => [d.id, d]));
  const attempts = new Map<string, Attempt>();
  const replyCount = endpoints.map(() => 0);
  const starts: Start[] = [];
  const pauses: { e: number; worker: number; at: number; writtenAt: number; until: number }[] = [];
  const violations: string[] = [];
  /** The most fast-budget slots each endpoint held at once in one worker. */
  const mostYoung = endpoints.map(() => 0);
  /** The most fast-budget slots all endpoints but the first held at once in one worker. */
  let mostYoungOthers = 0;
  const rounds: {
    limit: number;
    candidates: number;
    picked: Map<string, number>;
    /** Endpoints that could take a delivery (a token too, if bucketed) and got none. */
    waiting: number;
    /** Endpoints served by the round whose bucket was empty. */
    emptyBuckets: number;
    /** Per account: unanswered attempts before the round, taken by it, and its parts within its share. */
    accounts: Map<string, { before: number; taken: number; within: number }>;
  }[] = [];
  /** Each delivery's first start. */
  const firstStart = new Map<string, number>();
  let ids = 0;

  const answer = (a: Attempt) => {
    const worker = workers[a.worker] as (typeof workers)[number];
    const delivery = byId.get(a.id.split('#')[0] ?? '') as Delivery;
    const verdict = worker.scheduler.judge({
      id: a.id,
      endpointId: `we_${a.e}`,
      status: a.reply.status,
      forbidden: false,
      retryAfterMs: a.reply.retryAfterMs,
      started: a.started,
      finished: clock,
      retry: delivery.attemptCount + 1,
    });
    a.answered = true;
    a.settled = !verdict.urgent;
    a.writeAt = clock + 1;
    a.congested = verdict.congested;
    a.fast = verdict.fast;
    a.pauseUntil = verdict.pauseUntil;
    a.next = verdict.nextStatus;
    a.nextAt = verdict.nextAttemptAt;
    if (verdict.pauseUntil !== null) {
      pauses.push({ e: a.e, worker: a.worker, at: clock, writtenAt: clock + 1, until: verdict.pauseUntil });
    }
  };

  /** The outcome statement of one worker's batch. */
  const write = (batch: readonly Attempt[]) => {
    const per = new Map<number, { congested: boolean; fast: number; pause: number | null }>();
    for (const a of batch) {
      const delivery = byId.get(a.id.split('#')[0] ?? '') as Delivery;
      delivery.attemptCount += 1;
      delivery.state = a.next === 'failed' ? 'due' : (a.next ?? 'due');
      if (delivery.state === 'due') delivery.dueAt = a.nextAt ?? clock;
      (pacing[a.e] as Pacing).charged -= 1;
      const p = per.get(a.e) ?? { congested: false, fast: 0, pause: null };
      p.congested ||= a.congested;
      p.fast += a.fast ? 1 : 0;
      if (a.pauseUntil !== null) p.pause = Math.max(p.pause ?? 0, a.pauseUntil);
      per.set(a.e, p);
    }
    for (const [e, p] of per) {
      const row = pacing[e] as Pacing;
      if (p.congested || p.fast > 0) row.limit = nextLimit(row.limit, config.ceiling, p);
      if (p.pause !== null) row.pausedUntil = Math.max(row.pausedUntil ?? 0, p.pause);
    }
    for (const a of batch) {
      (workers[a.worker] as (typeof workers)[number]).scheduler.finished(a.id);
      attempts.delete(a.id);
      // A completion wakes its worker's loop.
      (workers[a.worker] as (typeof workers)[number]).nextRoundAt = clock;
    }
  };

  const round = (w: number, scheduler: SchedulerType): number => {
    const plan = scheduler.plan();
    if (!plan) return 0;
    const view: EndpointPacing[] = endpoints.map((model, e) => {
      const row = pacing[e] as Pacing;
      let mine = 0;
      for (const a of attempts.values()) if (a.worker === w && a.e === e && a.settled) mine += 1;
      return {
        id: `we_${e}`,
        ...(model.account === undefined ? {} : { account: `acct_${model.account}` }),
        limit: row.limit,
        inFlight: row.charged - mine,
        pausedUntil: row.pausedUntil,
        maxPerSecond: model.maxPerSecond,
        tokens: row.tokens,
        tokensAt: row.tokensAt,
        due: deliveries.filter((d) => d.e === e && d.state === 'due' && d.dueAt <= clock).length,
      };
    });
    // The statement's random order.
    const order = view.map((v) => ({ v, key: random() })).sort((a, b) => a.key - b.key);
    const request = { ...plan, accounts: new Map(plan.accounts), running: new Map(plan.running) };
    const picked = pickRound(
      order.map((o) => o.v),
      request,
    );
    const candidates = roundCandidates(
      order.map((o) => o.v),
      request,
    );
    const parts = roundParts(candidates.slice(0, plan.limit), request);
    const accounts = new Map<string, { before: number; taken: number; within: number }>();
    for (const v of candidates.slice(0, plan.limit)) {
      if (v.account === undefined) continue;
      const entry = accounts.get(v.account) ?? {
        before: request.accounts.get(v.account) ?? 0,
        taken: 0,
        within: 0,
      };
      entry.taken += picked.get(v.id) ?? 0;
      entry.within += parts.get(v.id) ?? 0;
      accounts.set(v.account, entry);
    }
    for (const entry of accounts.values()) {
      entry.within = Math.min(
        entry.within,
        Math.max(0, (plan.accountShare ?? Number.POSITIVE_INFINITY) - entry.before),
      );
    }
    const hasToken = (v: EndpointPacing) =>
      v.maxPerSecond === null || bucketTokens(v.maxPerSecond, v.tokens, v.tokensAt, clock) >= 1;
    rounds.push({
      limit: plan.limit,
      candidates: Math.min(candidates.length, plan.limit),
      picked,
      waiting: candidates.filter((v) => hasToken(v) && !picked.has(v.id)).length,
      emptyBuckets: candidates.slice(0, plan.limit).filter((v) => !hasToken(v)).length,
      accounts,
    });
    const started: { id: string; endpointId: string; attemptCount: number }[] = [];
    for (const [endpointId, n] of picked) {
      const e = Number(endpointId.slice(3));
      const model = endpoints[e] as EndpointModel;
      const row = pacing[e] as Pacing;
      const due = deliveries
        .filter((d) => d.e === e && d.state === 'due' && d.dueAt <= clock)
        .sort((a, b) => a.dueAt - b.dueAt)
        .slice(0, n);
      for (const d of due) {
        d.state = 'leased';
        const id = `${d.id}#${ids++}`;
        const reply = model.replies[(replyCount[e] ?? 0) % model.replies.length] as Reply;
        replyCount[e] = (replyCount[e] ?? 0) + 1;
        attempts.set(id, {
          id,
          worker: w,
          e,
          started: clock,
          answerAt: clock + model.latency,
          answered: false,
          settled: false,
          writeAt: null,
          reply,
          congested: false,
          fast: false,
          pauseUntil: null,
          next: null,
          nextAt: null,
        });
        started.push({
          id,
          endpointId,
          attemptCount: d.attemptCount,
          ...(model.account === undefined ? {} : { account: `acct_${model.account}` }),
        });
        starts.push({ at: clock, worker: w, e });
        if (!firstStart.has(d.id)) firstStart.set(d.id, clock);
      }
      row.charged += due.length;
      // The endpoint's limit holds at the receiver right after the lease, across every worker.
      let unanswered = 0;
      for (const a of attempts.values()) if (a.e === e && !a.answered) unanswered += 1;
      const limit = Math.floor(Math.min(row.limit ?? config.ceiling, config.ceiling));
      if (unanswered > limit)
        violations.push(`endpoint ${e}: ${unanswered} at the receiver, limit ${limit}, at ${clock}`);
      if (model.maxPerSecond !== null) {
        row.tokens = bucketTokens(model.maxPerSecond, row.tokens, row.tokensAt, clock) - due.length;
        row.tokensAt = clock;
      }
    }
    scheduler.started(started);
    return started.length;
  };

  const check = () => {
    for (const [w, { scheduler }] of workers.entries()) {
      const youngOf = new Map<number, number>();
      let young = 0;
      let held = 0;
      const running = new Map<number, number>();
      for (const a of attempts.values()) {
        if (a.worker !== w) continue;
        held += 1;
        if (!a.answered && clock - a.started < SLOW_MS) {
          young += 1;
          youngOf.set(a.e, (youngOf.get(a.e) ?? 0) + 1);
        }
        if (!a.answered) running.set(a.e, (running.get(a.e) ?? 0) + 1);
      }
      if (young > config.concurrency) violations.push(`worker ${w}: ${young} young attempts at ${clock}`);
      if (held > 2 * config.concurrency) violations.push(`worker ${w}: ${held} attempts at ${clock}`);
      for (const [e, n] of running) {
        if (n > scheduler.share) violations.push(`worker ${w}, endpoint ${e}: ${n} running at ${clock}`);
      }
      for (const [e, n] of youngOf) mostYoung[e] = Math.max(mostYoung[e] ?? 0, n);
      mostYoungOthers = Math.max(mostYoungOthers, young - (youngOf.get(0) ?? 0));
    }
    for (const [e, row] of pacing.entries()) {
      let unanswered = 0;
      for (const a of attempts.values()) if (a.e === e && !a.answered) unanswered += 1;
      if (unanswered > config.ceiling)
        violations.push(`endpoint ${e}: ${unanswered} at the receiver at ${clock}`);
      if (row.limit !== null && (row.limit < 1 || row.limit > config.ceiling)) {
        violations.push(`endpoint ${e}: limit ${row.limit}`);
      }
    }
  };

  // Long enough to serve every endpoint alone, one delivery at a time, through every retry and pause.
  const horizon = endpoints.reduce(
    (sum, m) =>
      sum + m.backlog * ((SCHEDULE.length + 1) * (m.latency + MAX_RETRY_AFTER + 200) + (m.dueEvery ?? 0)),
    1_000,
  );
  while (deliveries.some((d) => d.state === 'due' || d.state === 'leased')) {
    if (clock > horizon) {
      violations.push('did not finish');
      break;
    }
    for (const a of attempts.values()) if (a.answerAt === clock) answer(a);
    for (const w of workers.keys()) {
      const batch = [...attempts.values()].filter((a) => a.worker === w && a.writeAt === clock);
      if (batch.length > 0) write(batch);
    }
    for (const [w, worker] of workers.entries()) {
      if (worker.nextRoundAt > clock) continue;
      const leased = round(w, worker.scheduler);
      worker.nextRoundAt = clock + Math.max(1, worker.scheduler.afterRound({ leased, notified: false }));
    }
    check();
    // Nothing happens between events: skip to the next answer, write or round.
    let next = Number.POSITIVE_INFINITY;
    for (const a of attempts.values()) next = Math.min(next, a.answered ? (a.writeAt ?? next) : a.answerAt);
    for (const worker of workers) next = Math.min(next, worker.nextRoundAt);
    clock = Math.max(clock + 1, next === Number.POSITIVE_INFINITY ? clock + 1 : next);
  }
  return { starts, pauses, violations, rounds, deliveries, mostYoung, mostYoungOthers, firstStart };
}

/** A scheduler alone, for its share. */
function scheduler(concurrency: number): Scheduler {
  return new Scheduler({
    concurrency,
    perEndpoint: 4,
    timeoutMs: TIMEOUT_MS,
    pollMs: 100,
    schedule: SCHEDULE,
    now: () => 0,
    random: () => 0.5,
  });
}

const modelArb = fc.tuple(fc.array(endpointArb, { minLength: 1, maxLength: 5 }), configArb);

describe('the scheduler, in a model of workers and endpoints on a fake clock', () => {
  it('never exceeds the worker budgets, the share, nor an endpoint limit; every delivery ends', () => {
    fc.assert(
      fc.property(modelArb, ([endpoints, config]) => {
        const { violations, deliveries } = simulate(endpoints, config);
        expect(violations).toEqual([]);
        expect(deliveries.filter((d) => d.state !== 'succeeded' && d.state !== 'dead')).toEqual([]);
        // Exactly the configured attempts before dead: a delivery that never succeeded had them all.
        for (const d of deliveries) {
          if (d.state === 'dead') expect(d.attemptCount).toBe(SCHEDULE.length + 1);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('holds maxPerSecond over every window: fewer starts than the bucket plus the window at the rate', () => {
    fc.assert(
      fc.property(modelArb, ([endpoints, config]) => {
        const { starts } = simulate(endpoints, config);
        for (const [e, model] of endpoints.entries()) {
          if (model.maxPerSecond === null) continue;
          const mine = starts.filter((s) => s.e === e).map((s) => s.at);
          const size = Math.max(1, model.maxPerSecond / 10);
          for (const windowMs of [1, 100, 1_000]) {
            for (const [i, from] of mine.entries()) {
              let n = 0;
              for (let j = i; j < mine.length && (mine[j] ?? 0) < from + windowMs; j += 1) n += 1;
              expect(n).toBeLessThan(size + (windowMs * model.maxPerSecond) / 1000 + 1e-9);
            }
          }
          // Within one second, a bucket of at most one token never lets more than maxPerSecond through.
          if (model.maxPerSecond <= 10) {
            for (const [i, from] of mine.entries()) {
              expect(mine.filter((at, j) => j >= i && at < from + 1_000).length).toBeLessThanOrEqual(
                model.maxPerSecond,
              );
            }
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it('sends a paused endpoint nothing until its Retry-After pause ends', () => {
    fc.assert(
      fc.property(modelArb, ([endpoints, config]) => {
        const { starts, pauses } = simulate(endpoints, config);
        for (const pause of pauses) {
          // The worker that was told: from the answer on; every worker: once the outcome is written.
          const early = starts.filter(
            (s) =>
              s.e === pause.e &&
              s.at < pause.until &&
              (s.at >= pause.writtenAt || (s.worker === pause.worker && s.at >= pause.at)),
          );
          expect(early).toEqual([]);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('leaves no slot idle while an endpoint waits, and gives no endpoint more than an equal part of a round', () => {
    fc.assert(
      fc.property(modelArb, ([endpoints, config]) => {
        const { rounds } = simulate(endpoints, config);
        for (const r of rounds) {
          const total = [...r.picked.values()].reduce((a, b) => a + b, 0);
          expect(total).toBeLessThanOrEqual(r.limit);
          // An endpoint that could take a delivery waits only when the round's slots are spent
          // (an endpoint whose bucket is empty is no candidate, so it takes no place).
          expect(r.emptyBuckets).toBe(0);
          if (r.waiting > 0) expect(total).toBe(r.limit);
          const each = Math.ceil(r.limit / Math.max(1, r.candidates));
          for (const n of r.picked.values()) expect(n).toBeLessThanOrEqual(each);
        }
      }),
      { numRuns: 40 },
    );
  });

  it('serves every endpoint with work in the first round whose slots cover an equal part for each', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 4 }),
        (due, part) => {
          const idle = {
            limit: null,
            inFlight: 0,
            pausedUntil: null,
            maxPerSecond: null,
            tokens: null,
            tokensAt: null,
          };
          const endpoints = due.map((n, e) => ({ ...idle, id: `we_${e}`, due: n }));
          const picked = pickRound(endpoints, {
            at: 0,
            limit: part * due.length,
            perEndpoint: 4,
            share: 4,
            paused: [],
            running: new Map(),
          });
          expect(endpoints.filter((e) => !picked.has(e.id))).toEqual([]);
        },
      ),
    );
  });

  it('a slow endpoint costs the others at most its share of the slots', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 12 }),
        fc.array(fc.integer({ min: 20, max: 40 }), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        (concurrency, fastLatencies, seed) => {
          const config = { workers: 1, concurrency, ceiling: 100, seed };
          const slow: EndpointModel = {
            latency: 4_000,
            replies: [{ status: 204 }],
            maxPerSecond: null,
            backlog: 40,
          };
          const fast = fastLatencies.map(
            (latency): EndpointModel => ({
              latency,
              replies: [{ status: 204 }],
              maxPerSecond: null,
              backlog: 100,
            }),
          );
          const beside = simulate([slow, ...fast], config);
          expect(beside.violations).toEqual([]);
          // The slow endpoint holds at most its share of the fast budget: the rest stays for the
          // others.
          const { share } = scheduler(concurrency);
          expect(beside.mostYoung[0]).toBeGreaterThan(0);
          expect(beside.mostYoung[0]).toBeLessThanOrEqual(share);
          // Once its attempts turn slow they leave the fast budget: the fast endpoints then hold
          // more of it than the slow one left them at first (when they can: each has its share).
          if (Math.min(fast.length * share, concurrency) > concurrency - share) {
            expect(beside.mostYoungOthers).toBeGreaterThan(concurrency - share);
          }
          // The fast endpoints are all served, and never wait behind the slow one's backlog: their
          // last start comes before the slow one's.
          const fastStarts = beside.starts.filter((s) => s.e > 0).map((s) => s.at);
          expect(fastStarts).toHaveLength(fast.length * 100);
          const slowStarts = beside.starts.filter((s) => s.e === 0).map((s) => s.at);
          expect(Math.max(...fastStarts)).toBeLessThan(Math.max(...slowStarts));
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('fairness across accounts, in the model on the fake clock', () => {
  const accountsArb = fc.tuple(
    fc.array(
      endpointArb.chain((model) =>
        fc
          .record({ account: fc.integer({ min: 0, max: 2 }), dueEvery: fc.integer({ min: 0, max: 60 }) })
          .map((extra) => ({ ...model, ...extra })),
      ),
      { minLength: 2, maxLength: 6 },
    ),
    configArb,
    fc.integer({ min: 1, max: 8 }),
  );

  it('one account cannot take more than its share while another waits: beyond it only once every other had its share', () => {
    fc.assert(
      fc.property(accountsArb, ([endpoints, config, accountShare]) => {
        const { rounds, violations, deliveries } = simulate(endpoints, { ...config, accountShare });
        expect(violations).toEqual([]);
        expect(deliveries.filter((d) => d.state !== 'succeeded' && d.state !== 'dead')).toEqual([]);
        for (const r of rounds) {
          const total = [...r.accounts.values()].reduce((sum, a) => sum + a.within, 0);
          for (const [account, a] of r.accounts) {
            // Slots this round gave the account beyond its share.
            const beyond =
              Math.max(0, a.before + a.taken - accountShare) - Math.max(0, a.before - accountShare);
            if (beyond === 0) continue;
            for (const [other, b] of r.accounts) {
              if (other === account) continue;
              // Every other account of the round got all it could take within its share.
              expect(b.taken).toBeGreaterThanOrEqual(b.within);
            }
            expect(total).toBeLessThanOrEqual(r.limit);
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it("one account's hanging receivers never make another account's deliveries wait for their timeout", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 4, max: 12 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 10, max: 80 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        (concurrency, hanging, dueEvery, seed) => {
          // Account 0: endpoints whose receivers answer only after 5 s, each with a deep backlog.
          const stuck = Array.from(
            { length: hanging },
            (): EndpointModel => ({
              latency: 5_000,
              replies: [{ status: undefined }],
              maxPerSecond: null,
              backlog: 2 * concurrency,
              account: 0,
            }),
          );
          // Account 1: one fast endpoint whose deliveries fall due one by one.
          const steady: EndpointModel = {
            latency: 5,
            replies: [{ status: 204 }],
            maxPerSecond: null,
            backlog: 40,
            account: 1,
            dueEvery,
          };
          const config = { workers: 1, concurrency, ceiling: 2 * concurrency, seed };
          const waits = (run: ReturnType<typeof simulate>) =>
            run.deliveries
              .filter((d) => d.e === hanging)
              .map((d) => (run.firstStart.get(d.id) ?? Number.POSITIVE_INFINITY) - d.dueAt);
          const fair = simulate([...stuck, steady], {
            ...config,
            accountShare: Math.max(1, Math.floor(concurrency / 4)),
          });
          expect(fair.violations).toEqual([]);
          // Each of account 1's deliveries starts within the slow threshold (and a poll) of falling due.
          expect(Math.max(...waits(fair))).toBeLessThanOrEqual(SLOW_MS + 150);
          // Without accounts, the hanging receivers take every slot once they all answer late:
          // some delivery of the other endpoint waits for a timeout.
          const blind = simulate(
            [...stuck, steady].map(({ account: _, ...model }) => model),
            config,
          );
          if (
            hanging * Math.min(2 * concurrency, concurrency - Math.floor(concurrency / 4)) >=
            2 * concurrency
          ) {
            expect(Math.max(...waits(blind))).toBeGreaterThan(SLOW_MS + 150);
          }
        },
      ),
      { numRuns: 30 },
    );
  });
});

describe('the shared pacing rules', () => {
  it('AIMD: halves on overload (not below 1), grows by 1 per limit fast successes, never above the ceiling', () => {
    fc.assert(
      fc.property(
        fc.option(fc.double({ min: 1, max: 64, noNaN: true }), { nil: null }),
        fc.integer({ min: 1, max: 64 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 200 }),
        (limit, ceiling, congested, fast) => {
          const current = Math.min(limit ?? ceiling, ceiling);
          const next = nextLimit(limit, ceiling, { congested, fast });
          expect(next).toBeGreaterThanOrEqual(1);
          expect(next).toBeLessThanOrEqual(ceiling);
          if (congested) expect(next).toBeLessThanOrEqual(Math.max(1, current / 2));
          else expect(next).toBeGreaterThanOrEqual(current);
        },
      ),
    );
    expect(nextLimit(4, 8, { congested: false, fast: 4 })).toBe(5);
  });
});

describe('Scheduler decisions', () => {
  const make = (clock: { at: number }, concurrency = 4) =>
    new Scheduler({
      concurrency,
      perEndpoint: 4,
      timeoutMs: TIMEOUT_MS,
      pollMs: 100,
      schedule: SCHEDULE,
      now: () => clock.at,
      random: () => 0.5,
    });
  const answer = (id: string, status: number | undefined, retryAfterMs?: number) => ({
    id,
    endpointId: 'we_1',
    status,
    forbidden: false,
    retryAfterMs,
    started: 0,
    finished: 5,
    retry: 1,
  });

  it('runs the next round at once after one that got all it asked for or a notification, else waits', () => {
    const clock = { at: 0 };
    const scheduler = make(clock);
    expect(scheduler.afterRound({ leased: 0, notified: false })).toBe(100); // idle: the poll
    expect(scheduler.afterRound({ leased: 0, notified: true })).toBe(0);
    expect(scheduler.plan()?.limit).toBe(4);
    scheduler.started([{ id: 'a', endpointId: 'we_1', attemptCount: 0 }]);
    expect(scheduler.afterRound({ leased: 1, notified: false })).toBeGreaterThan(0); // got less than asked
    // Busy: rounds that find nothing ask again sooner than the busy poll, three times, then poll.
    const busyPoll = scheduler.afterRound({ leased: 1, notified: false });
    scheduler.plan();
    const misses = [1, 2, 3, 4].map(() => scheduler.afterRound({ leased: 0, notified: false }));
    expect(misses.slice(0, 3).every((ms) => ms < busyPoll)).toBe(true);
    expect(misses[3]).toBe(busyPoll);
    expect(busyPoll).toBeLessThan(100);
    clock.at = 10_000; // long after the last lease: idle again
    expect(scheduler.afterRound({ leased: 0, notified: false })).toBe(100);
  });

  it('frees an answered place for the next lease unless the answer is overload news', () => {
    const clock = { at: 0 };
    const scheduler = make(clock);
    scheduler.started(['ok', 'busy', 'later'].map((id) => ({ id, endpointId: 'we_1', attemptCount: 0 })));
    clock.at = 5;
    expect(scheduler.judge(answer('ok', 204))).toMatchObject({
      nextStatus: 'succeeded',
      fast: true,
      urgent: false,
    });
    expect(scheduler.judge(answer('busy', 503))).toMatchObject({
      nextStatus: 'failed',
      congested: true,
      urgent: true,
    });
    expect(scheduler.judge(answer('later', 429, 1_000))).toMatchObject({ pauseUntil: 1_005, urgent: true });
    const plan = scheduler.plan();
    expect(plan?.settled).toEqual([{ id: 'ok', attemptCount: 0 }]);
    expect(plan?.running.get('we_1')).toBe(2);
    expect(plan?.paused).toEqual(['we_1']);
    clock.at = 1_005;
    expect(scheduler.plan()?.paused).toEqual([]);
    for (const id of ['ok', 'busy', 'later']) scheduler.finished(id);
    expect(scheduler.size).toBe(0);
  });

  it('ends a delivery after exactly the schedule: dead on the last retry', () => {
    const scheduler = make({ at: 0 });
    const verdicts = [1, 2, 3].map(
      (retry) => scheduler.judge({ ...answer(`d${retry}`, 500), retry }).nextStatus,
    );
    expect(verdicts).toEqual(['failed', 'failed', 'dead']);
  });
});
