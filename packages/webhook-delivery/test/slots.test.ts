import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Slots } from '../src/slots';

// The worker's slot accounting on a fake clock, without PostgreSQL or HTTP. A model of N
// endpoints, each with a latency, a ceiling (its in-flight limit) and a backlog; every simulated
// millisecond a lease round asks for `free()` deliveries and hands them out as the lease statement
// does (the endpoints under their ceiling and their share, in random order, each up to its room,
// an equal share of the round), answers arrive after each endpoint's latency and
// outcomes are written a millisecond later.

interface Endpoint {
  latency: number;
  ceiling: number;
  backlog: number;
}

const endpointArb = fc.record({
  latency: fc.integer({ min: 1, max: 600 }),
  ceiling: fc.integer({ min: 1, max: 8 }),
  backlog: fc.integer({ min: 0, max: 30 }),
});

function simulate(endpoints: readonly Endpoint[], concurrency: number, seed: number) {
  let clock = 0;
  let random = seed;
  const next = () => {
    random = (Math.imul(random, 1103515245) + 12345) >>> 0;
    return random / 2 ** 32;
  };
  const slots = new Slots({ concurrency, slowMs: 250, now: () => clock });
  const left = endpoints.map((e) => e.backlog);
  const inFlight = endpoints.map(() => 0);
  const done = endpoints.map(() => 0);
  const finishedAt = endpoints.map(() => 0);
  /** Attempts by id: endpoint, when the answer comes, when the outcome is written. */
  const attempts = new Map<string, { e: number; answerAt: number; writtenAt: number }>();
  let ids = 0;
  const violations: string[] = [];
  while (left.some((n) => n > 0) || attempts.size > 0) {
    if (clock > 200_000) return { violations: [...violations, 'did not finish'], done, finishedAt };
    for (const [id, a] of attempts) {
      if (a.answerAt === clock) slots.answer(id);
      if (a.writtenAt === clock) {
        slots.release(id);
        attempts.delete(id);
        inFlight[a.e] = (inFlight[a.e] ?? 1) - 1;
        done[a.e] = (done[a.e] ?? 0) + 1;
        finishedAt[a.e] = clock;
      }
    }
    const limit = slots.free();
    if (limit > 0) {
      const running = slots.running();
      const order = endpoints
        .map((_, e) => e)
        .filter(
          (e) =>
            (left[e] ?? 0) > 0 &&
            (running.get(`we_${e}`) ?? 0) < slots.share &&
            (inFlight[e] ?? 0) < (endpoints[e]?.ceiling ?? 0),
        )
        .sort(() => next() - 0.5);
      const candidates = order.slice(0, limit);
      const each = Math.max(1, Math.ceil(limit / Math.max(1, candidates.length)));
      let leased = 0;
      for (const e of candidates) {
        const endpoint = endpoints[e] as Endpoint;
        const room = Math.min(
          endpoint.ceiling - (inFlight[e] ?? 0),
          slots.share - (running.get(`we_${e}`) ?? 0),
          each,
          left[e] ?? 0,
          limit - leased,
        );
        for (let i = 0; i < room; i += 1) {
          const id = `dlv_${ids++}`;
          slots.take(id, `we_${e}`, 0);
          attempts.set(id, {
            e,
            answerAt: clock + endpoint.latency,
            writtenAt: clock + endpoint.latency + 1,
          });
          inFlight[e] = (inFlight[e] ?? 0) + 1;
          left[e] = (left[e] ?? 0) - 1;
          leased += 1;
        }
      }
    }
    // The bounds, after every round.
    let young = 0;
    const unanswered = new Map<number, number>();
    for (const a of attempts.values()) {
      if (a.answerAt > clock) {
        unanswered.set(a.e, (unanswered.get(a.e) ?? 0) + 1);
        if (clock - (a.answerAt - (endpoints[a.e]?.latency ?? 0)) < 250) young += 1;
      }
    }
    if (young > concurrency) violations.push(`${young} young attempts > ${concurrency} at ${clock}`);
    if (attempts.size > 2 * concurrency) violations.push(`${attempts.size} attempts > 2 x ${concurrency}`);
    for (const [e, n] of unanswered) {
      if (n > slots.share) violations.push(`endpoint ${e}: ${n} running > share ${slots.share}`);
    }
    clock += 1;
  }
  return { violations, done, finishedAt };
}

describe('Slots', () => {
  it('gives one endpoint at most three quarters of the slots, and always at least one', () => {
    for (const [concurrency, share] of [
      [1, 1],
      [2, 1],
      [4, 3],
      [32, 24],
      [128, 96],
    ] as const) {
      expect(new Slots({ concurrency, slowMs: 250, now: () => 0 }).share).toBe(share);
    }
  });

  it('moves an attempt unanswered after slowMs to the second budget, up to twice concurrency in all', () => {
    let clock = 0;
    const slots = new Slots({ concurrency: 4, slowMs: 250, now: () => clock });
    for (const id of ['a', 'b', 'c']) slots.take(id, 'we_slow', 0);
    expect(slots.free()).toBe(1);
    clock = 250;
    expect(slots.free()).toBe(4);
    for (const id of ['d', 'e', 'f', 'g', 'h']) slots.take(id, 'we_fast', 0);
    expect(slots.free()).toBe(-1);
    slots.answer('d');
    expect(slots.free()).toBe(0); // answered, but its outcome is not written: it still counts in all
    expect(slots.settled()).toEqual([{ id: 'd', attemptCount: 0 }]);
    slots.release('d');
    expect(slots.free()).toBe(0);
    slots.release('a'); // an old attempt: the second budget gains a place, the first none
    expect(slots.free()).toBe(0);
    slots.release('e');
    expect(slots.free()).toBe(1);
    expect([...slots.running()]).toEqual([
      ['we_slow', 2],
      ['we_fast', 3],
    ]);
  });

  it('never exceeds its bounds, and every endpoint is served to the end, slow ones beside fast ones', () => {
    fc.assert(
      fc.property(
        fc.array(endpointArb, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        (endpoints, concurrency, seed) => {
          const { violations, done } = simulate(endpoints, concurrency, seed);
          expect(violations).toEqual([]);
          expect(done).toEqual(endpoints.map((e) => e.backlog));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a slow endpoint costs the others at most its share of the slots', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 16 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        (concurrency, fastLatency, seed) => {
          const slow = { latency: 5_000, ceiling: 100, backlog: 30 };
          const fast = { latency: fastLatency, ceiling: 100, backlog: 40 };
          const beside = simulate([slow, fast], concurrency, seed);
          expect(beside.violations).toEqual([]);
          // The fast endpoint beside the slow one finishes no later than alone on the slots the
          // slow one cannot take.
          const share = new Slots({ concurrency, slowMs: 250, now: () => 0 }).share;
          const alone = simulate([fast], concurrency - share, seed);
          expect(beside.finishedAt[1] ?? 0).toBeLessThanOrEqual(alone.finishedAt[0] ?? 0);
        },
      ),
      { numRuns: 40 },
    );
  });
});
