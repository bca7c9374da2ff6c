import { classifyAttempt, type Outcome } from './classify';
import { FAST_MS, isCongestion, MAX_PAUSE_MS } from './pacing';
import { retryDelay } from './schedule';
import { Slots } from './slots';

/**
 * The worker's scheduling decisions, with no I/O: time comes from `now`, chance from `random`,
 * and every decision is plain data. The worker's loop asks it what a lease round may take
 * ({@link Scheduler.plan}), tells it which attempts started, answered and finished, asks it what
 * an answer means ({@link Scheduler.judge}) and when to run the next round
 * ({@link Scheduler.afterRound}).
 *
 * Rules that must hold across every worker and process (an endpoint's adaptive limit, its
 * `Retry-After` pause, its `maxPerSecond` bucket, which endpoints a round serves) are applied by
 * the lease and outcome statements on the endpoint's shared pacing row, where they are atomic;
 * `pacing.ts` states them as pure functions (`pickRound`, `nextLimit`, `bucketTokens`), which
 * `test/scheduler-lease.test.ts` checks against the lease statement. This module decides what
 * this worker asks of them and what it reports.
 */

/** A worker that leased within this long counts as busy: slots freed elsewhere are only seen by asking. */
const BUSY_MS = 1_000;
/** The poll while busy (or `pollMs`, if shorter). */
const BUSY_POLL_MS = 20;
/** After a busy round that leased nothing (most often another worker held the pacing row): ask again this soon, this many times. */
const RETRY_MS = 3;
const RETRY_MISSES = 3;
/** An attempt unanswered for this long (or for a fast answer's time) moves out of the fast budget. */
const SLOT_MS = 250;

export interface SchedulerOptions {
  /** Attempts in the fast budget (`concurrency` of the worker). */
  concurrency: number;
  /** The ceiling of each endpoint's adaptive limit. */
  perEndpoint: number;
  timeoutMs: number;
  /** The idle wait between rounds. */
  pollMs: number;
  /** Retry delays in ms. */
  schedule: readonly number[];
  now: () => number;
  random: () => number;
  /**
   * The most unanswered attempts one account may have in this worker while another account's
   * deliveries wait (absent: no account rule). @defaultValue none
   */
  accountShare?: number | undefined;
}

/** What one lease round asks the lease statement for. */
export interface LeasePlan {
  at: number;
  /** Deliveries wanted at most. */
  limit: number;
  perEndpoint: number;
  /** The most unanswered attempts one endpoint may have in this worker. */
  share: number;
  /** Endpoints that asked this worker for a pause not yet written for every worker. */
  paused: string[];
  /** Unanswered attempts per endpoint. */
  running: ReadonlyMap<string, number>;
  /** Answered attempts whose outcome is not written yet: their places count as free. */
  settled: { id: string; attemptCount: number }[];
  /** The most unanswered attempts one account may have while another account's deliveries wait. */
  accountShare: number | undefined;
  /** Unanswered attempts per account. */
  accounts: ReadonlyMap<string, number>;
}

/** An attempt that starts: a leased delivery. */
export interface Start {
  id: string;
  endpointId: string;
  attemptCount: number;
  /** The endpoint's account: its attempts count against the account rules. */
  account?: string;
}

/** What an attempt came to, as the scheduler needs it. */
export interface Answer {
  id: string;
  endpointId: string;
  /** HTTP status, or undefined for a timeout, a connection error or a forbidden destination. */
  status: number | undefined;
  /** The destination was refused before any request: no news about the receiver's load. */
  forbidden: boolean;
  retryAfterMs: number | undefined;
  started: number;
  finished: number;
  /** This attempt's number in the delivery's current schedule (1 for its first). */
  retry: number;
}

/** What an answer means for its delivery and its endpoint. */
export interface Verdict {
  outcome: Outcome;
  nextStatus: 'succeeded' | 'failed' | 'dead';
  nextAttemptAt: number | null;
  /** Until when the endpoint asked (`Retry-After`) to be sent nothing. */
  pauseUntil: number | null;
  /** A sign of overload: the endpoint's limit halves. */
  congested: boolean;
  /** A fast success: the endpoint's limit grows by 1 / limit. */
  fast: boolean;
  /** Overload news: write it at once, and keep the attempt's place taken until it is written. */
  urgent: boolean;
}

/**
 * One worker's scheduler. Fast budget: `concurrency` attempts younger than the slow threshold;
 * slow attempts move to a second budget of the same size, so slow receivers never hold the slots
 * fast ones need. One endpoint runs at most `share` (three quarters) of them. Its places in the
 * shared limit free when the answer arrives, unless the answer is overload news.
 *
 * @example
 * ```ts
 * let clock = 0;
 * const scheduler = new Scheduler({
 *   concurrency: 4, perEndpoint: 4, timeoutMs: 10_000, pollMs: 250, schedule: [1_000],
 *   now: () => clock, random: () => 0.5,
 * });
 * scheduler.plan(); // { limit: 4, share: 3, ... }
 * scheduler.started([{ id: 'dlv_1', endpointId: 'we_1', attemptCount: 0 }]);
 * clock = 5;
 * scheduler.judge({ id: 'dlv_1', endpointId: 'we_1', status: 204, forbidden: false,
 *   retryAfterMs: undefined, started: 0, finished: 5, retry: 1 }).nextStatus; // 'succeeded'
 * scheduler.finished('dlv_1');
 * ```
 */
export class Scheduler {
  readonly #options: SchedulerOptions;
  readonly #slots: Slots;
  readonly #fastMs: number;
  readonly #paused = new Map<string, number>();
  #lastLeased = Number.NEGATIVE_INFINITY;
  #misses = 0;
  #asked = 0;

  constructor(options: SchedulerOptions) {
    this.#options = options;
    this.#fastMs = Math.min(FAST_MS, options.timeoutMs / 4);
    this.#slots = new Slots({
      concurrency: options.concurrency,
      slowMs: Math.min(SLOT_MS, this.#fastMs),
      now: options.now,
    });
  }

  /** The most unanswered attempts one endpoint may have in this worker. */
  get share(): number {
    return this.#slots.share;
  }

  /** Attempts held, from start until their outcome is written. */
  get size(): number {
    return this.#slots.size;
  }

  /** What a lease round may ask for now, or `undefined` when every slot is taken. */
  plan(): LeasePlan | undefined {
    const at = this.#options.now();
    const free = this.#slots.free();
    this.#asked = Math.max(0, free);
    if (free <= 0) return undefined;
    for (const [endpoint, until] of this.#paused) if (until <= at) this.#paused.delete(endpoint);
    return {
      at,
      limit: free,
      perEndpoint: this.#options.perEndpoint,
      share: this.#slots.share,
      // Slow receivers of an account already holding its share of slow places wait, as paused ones do.
      paused: [...new Set([...this.#paused.keys(), ...this.#slots.slowHeld()])],
      running: this.#slots.running(),
      settled: this.#slots.settled(),
      accountShare: this.#options.accountShare,
      accounts: this.#slots.accounts(),
    };
  }

  /** These deliveries were leased: their attempts start now. */
  started(starts: readonly Start[]): void {
    for (const s of starts) this.#slots.take(s.id, s.endpointId, s.attemptCount, s.account);
  }

  /** The attempt's answer is in: what it means, and its place freed unless it is overload news. */
  judge(answer: Answer): Verdict {
    const { finished, started, status } = answer;
    const outcome = classifyAttempt(status);
    const delay =
      outcome === 'retry'
        ? retryDelay(this.#options.schedule, answer.retry, this.#options.random, answer.retryAfterMs)
        : undefined;
    const nextStatus =
      outcome === 'succeeded' ? 'succeeded' : outcome === 'retry' && delay !== undefined ? 'failed' : 'dead';
    const pauseUntil =
      answer.retryAfterMs !== undefined && outcome === 'retry'
        ? finished + Math.min(answer.retryAfterMs, MAX_PAUSE_MS)
        : null;
    // An answer slower than half the timeout (and than a fast answer) is a receiver near its
    // limit: the next ones risk timing out, so its limit shrinks as on a timeout.
    const congested =
      isCongestion(status, answer.forbidden) ||
      finished - started >= Math.max(this.#options.timeoutMs / 2, FAST_MS);
    const urgent = congested || pauseUntil !== null;
    if (pauseUntil !== null) {
      this.#paused.set(answer.endpointId, Math.max(this.#paused.get(answer.endpointId) ?? 0, pauseUntil));
    }
    // Overload news keeps its place taken until the outcome statement has halved the limit or
    // written the pause, so no round leases into them meanwhile.
    if (!urgent) this.#slots.answer(answer.id);
    return {
      outcome,
      nextStatus,
      nextAttemptAt: delay === undefined ? null : finished + delay,
      pauseUntil,
      congested,
      fast: outcome === 'succeeded' && finished - started <= this.#fastMs,
      urgent,
    };
  }

  /** The attempt's outcome is written, or its lease given back: its slot is free. */
  finished(id: string): void {
    this.#slots.release(id);
  }

  /**
   * How long to wait before the next round (0: run it at once), after one that leased `leased`
   * deliveries; `notified`: new work was announced meanwhile. A completion ends any wait.
   */
  afterRound({ leased, notified }: { leased: number; notified: boolean }): number {
    const at = this.#options.now();
    if (leased > 0) this.#lastLeased = at;
    const free = this.#slots.free() > 0;
    // A round that got all it asked for may find more at once; one that got less has taken what
    // there is until attempts complete or time passes.
    if (free && ((leased > 0 && leased >= this.#asked) || notified)) {
      this.#misses = 0;
      return 0;
    }
    const busy = at - this.#lastLeased < BUSY_MS;
    // A busy round that found nothing most often met pacing rows another worker's round held
    // (skipped, not waited for): ask again as soon as that round is likely done, a few times.
    this.#misses = leased === 0 && busy && free ? this.#misses + 1 : 0;
    if (this.#misses > 0 && this.#misses <= RETRY_MISSES) return RETRY_MS;
    return busy ? Math.min(this.#options.pollMs, BUSY_POLL_MS) : this.#options.pollMs;
  }

  /** Attempts whose lease was last set more than `ageMs` ago: to renew. */
  renewDue(ageMs: number): string[] {
    return this.#slots.leasedBefore(ageMs);
  }

  /** Their leases were renewed now. */
  renewed(ids: readonly string[]): void {
    this.#slots.renewed(ids);
  }
}
