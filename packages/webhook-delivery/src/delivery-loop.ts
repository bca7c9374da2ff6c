import { type Listener, unlessRunning } from '@holdfast/db';
import { type AttemptContext, sendAttempt } from './attempt';
import { type LeasedRow, leaseDue, reconcileInFlight, releaseLease, renewLeases, settleTurns } from './lease';
import type { OutcomeWriter } from './outcome-writer';
import { pgArray } from './pg-array';
import type { Scheduler } from './scheduler';
import { SignerCache } from './signers';
import type { QueueDb } from './sql/worker';
import { listenForWork, type WakeSubscription, wakeChannelName } from './wake';

/** How often a worker recounts in-flight leases (repairing counts changed by hand). */
const RECONCILE_MS = 10_000;
/**
 * How often a worker moves later the turns of endpoints with nothing to lease now, after a round
 * that leased less than it asked for: until then every round visits each of them (a few index
 * probes), so an endpoint that went idle costs every round of every worker for up to this long.
 * A full round stopped once it had its endpoints; the turns behind them wait for the recount.
 */
const SETTLE_MS = 500;
/**
 * How often a worker looks whether the endpoints of its attempts running longer than this were
 * deleted or disabled meanwhile (their attempts are then aborted).
 */
const ENDPOINT_CHECK_MS = 1_000;
/** How often a worker whose listener could not subscribe tries again. */
const RESUBSCRIBE_MS = 10_000;

export interface DeliveryLoopOptions {
  queue: QueueDb;
  owner: string;
  stripe: number;
  leaseMs: number;
  /** Wakes on the outbox's notifications; without one, the poll finds new deliveries. */
  listener: Listener | undefined;
  now: () => number;
  onError: (error: unknown) => void;
  scheduler: Scheduler;
  writer: OutcomeWriter;
  attempts: AttemptContext;
}

/**
 * The I/O around the {@link Scheduler}: each round leases what the scheduler's plan allows (one
 * statement), sends each leased delivery, tells the scheduler of every start, answer and end, and
 * hands outcomes to the {@link OutcomeWriter}; between rounds it waits as the scheduler says,
 * woken early by a completion or by the outbox's notification.
 *
 * @example
 * ```ts
 * const loop = new DeliveryLoop({ queue, owner, stripe, leaseMs, listener, now, onError, scheduler, writer, attempts });
 * loop.start();
 * await loop.stop();
 * ```
 */
export class DeliveryLoop {
  readonly #o: DeliveryLoopOptions;
  readonly #signers = new SignerCache();
  /** Each attempt's task, from the lease until its outcome is written. */
  readonly #tasks = new Map<string, Promise<void>>();
  /** Each unanswered attempt's abort, with its endpoint and start. */
  readonly #requests = new Map<string, { endpointId: string; started: number; abort: AbortController }>();
  #checking = false;
  #running = false;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  /** A notification came while a round ran: the next round runs at once. */
  #notified = false;
  /** The listener's subscription, once taken (tried again while it is not: `#resubscribe`). */
  #subscription: WakeSubscription | undefined;
  #subscribing = false;
  #lastSubscribe = Number.NEGATIVE_INFINITY;
  #lastReconcile = 0;
  /** A round leased less than it asked for since the last repair of idle turns. */
  #short = false;

  constructor(options: DeliveryLoopOptions) {
    this.#o = options;
  }

  /** One lease round: resolves with how many attempts it started (without waiting for them). */
  async round(): Promise<number> {
    const { queue, owner, leaseMs, scheduler } = this.#o;
    const plan = scheduler.plan();
    if (!plan) return 0;
    const rows = await leaseDue(queue, {
      owner,
      limit: plan.limit,
      perEndpoint: plan.perEndpoint,
      at: new Date(plan.at),
      leaseMs,
      paused: plan.paused,
      endpointShare: plan.share,
      running: plan.running,
      settled: plan.settled,
      accountShare: plan.accountShare,
      accounts: plan.accounts,
    });
    scheduler.started(
      rows.map((r) => ({
        id: r.id,
        endpointId: r.endpoint_id,
        attemptCount: r.attempt_count,
        account: r.account_id,
      })),
    );
    // Its walk may have run out of turns that have come, visiting those with nothing to lease.
    if (rows.length < plan.limit) this.#short = true;
    for (const row of rows) this.#launch(row);
    return rows.length;
  }

  /** Resolves once every attempt started so far has its outcome written. */
  async settled(): Promise<void> {
    await Promise.all([...this.#tasks.values()]);
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    const { leaseMs, onError } = this.#o;
    // Two jobs, each skipped while its last run still goes (a slow recount on stale statistics
    // must neither pile up nor hold back the renewal of leases).
    const renew = unlessRunning(() => this.#renew(), onError);
    const reconcile = unlessRunning(() => this.#reconcile(), onError);
    const renewal = setInterval(
      () => {
        renew.tick();
        reconcile.tick();
      },
      Math.max(250, Math.min(leaseMs / 3, RECONCILE_MS)),
    );
    const abortGone = unlessRunning(() => this.abortGone(), onError);
    const check = setInterval(() => abortGone.tick(), ENDPOINT_CHECK_MS);
    // Only after a round that succeeded: an outage fails the rounds, and never starts this.
    const settle = unlessRunning(async () => {
      if (!this.#short) return;
      this.#short = false;
      await settleTurns(this.#o.queue);
    }, onError);
    const settling = setInterval(() => settle.tick(), SETTLE_MS);
    this.#loop = this.#run().finally(async () => {
      clearInterval(renewal);
      clearInterval(check);
      clearInterval(settling);
      await Promise.all([renew.idle(), reconcile.idle(), abortGone.idle(), settle.idle()]);
    });
  }

  /** Stops leasing, lets running attempts finish and their outcomes be written. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#wake?.();
    await this.#loop;
    await this.#subscription?.stop();
    await this.settled();
    await this.#o.writer.drain();
  }

  async #run(): Promise<void> {
    while (this.#running) {
      this.#resubscribe();
      this.#notified = false;
      let leased = 0;
      try {
        leased = await this.round();
      } catch (error) {
        this.#o.onError(error);
      }
      if (!this.#running) break;
      const wait = this.#o.scheduler.afterRound({ leased, notified: this.#notified });
      if (wait > 0) await this.#sleep(wait);
    }
  }

  /** Waits `ms`, or less if an attempt completes, a notification comes or the worker stops. */
  async #sleep(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.#wake = undefined;
  }

  #launch(row: LeasedRow): void {
    const { queue, owner, stripe, onError, scheduler } = this.#o;
    const task: Promise<void> = this.#attempt(row)
      .catch(async (error: unknown) => {
        onError(error);
        // Give the lease back so another round (or worker) retries it promptly.
        await releaseLease(queue, { owner, id: row.id, stripe }).catch(onError);
      })
      .finally(() => {
        scheduler.finished(row.id);
        this.#tasks.delete(row.id);
        this.#wake?.();
      });
    this.#tasks.set(row.id, task);
  }

  /**
   * Aborts this worker's attempts, unanswered for `ENDPOINT_CHECK_MS` or more, whose endpoint was
   * deleted or disabled meanwhile: they stop holding slots at once instead of running to the
   * timeout. Their leases are given back without an attempt row (see `#attempt`). One indexed
   * statement over the endpoints of such attempts; skipped while the last one runs. Resolves
   * with how many were aborted.
   */
  async abortGone(): Promise<number> {
    const { queue, now } = this.#o;
    if (this.#checking) return 0;
    const at = now();
    const endpoints = new Set<string>();
    for (const r of this.#requests.values())
      if (at - r.started >= ENDPOINT_CHECK_MS) endpoints.add(r.endpointId);
    if (endpoints.size === 0) return 0;
    this.#checking = true;
    try {
      const gone = await queue.db.query<{ id: string }>(queue.sql.goneEndpoints, [pgArray([...endpoints])]);
      const ids = new Set(gone.map((row) => row.id));
      let aborted = 0;
      for (const r of this.#requests.values()) {
        if (!ids.has(r.endpointId) || r.abort.signal.aborted) continue;
        r.abort.abort();
        aborted += 1;
      }
      return aborted;
    } finally {
      this.#checking = false;
    }
  }

  async #attempt(row: LeasedRow): Promise<void> {
    const { queue, owner, stripe, now, scheduler, writer } = this.#o;
    const started = now();
    const abort = new AbortController();
    this.#requests.set(row.id, { endpointId: row.endpoint_id, started, abort });
    const reply = await sendAttempt(
      {
        url: row.url,
        payload: row.payload,
        eventId: row.event_id,
        endpointId: row.endpoint_id,
        signer: this.#signers.for(row, started),
        started,
        now,
        signal: abort.signal,
      },
      this.#o.attempts,
    ).finally(() => this.#requests.delete(row.id));
    if (abort.signal.aborted && reply.status === undefined) {
      // The endpoint was deleted or disabled: no answer to judge, nothing about the receiver to
      // log or count toward disabling it. The lease goes back with its place; a disabled
      // endpoint's delivery is sent once it is enabled again, as any that fell due meanwhile.
      await releaseLease(queue, { owner, id: row.id, stripe });
      return;
    }
    const finished = now();
    const verdict = scheduler.judge({
      id: row.id,
      endpointId: row.endpoint_id,
      status: reply.status,
      forbidden: reply.forbidden,
      retryAfterMs: reply.retryAfterMs,
      started,
      finished,
      // A replay starts a fresh schedule (retry_base) while attempt_count keeps the total.
      retry: row.attempt_count + 1 - row.retry_base,
    });
    const { outcome, nextStatus, congested, fast, nextAttemptAt, pauseUntil } = verdict;
    await writer.write(
      {
        row,
        status: reply.status,
        error: reply.error,
        prefix: reply.prefix,
        outcome,
        nextStatus,
        started,
        finished,
        congested,
        fast,
        nextAttemptAt: nextAttemptAt === null ? null : new Date(nextAttemptAt),
        pauseUntil: pauseUntil === null ? null : new Date(pauseUntil),
      },
      verdict.urgent,
    );
  }

  async #renew(): Promise<void> {
    const { queue, owner, leaseMs, now, scheduler } = this.#o;
    // Attempts running for more than a third of the lease renew theirs.
    const due = scheduler.renewDue(leaseMs / 3);
    if (due.length > 0) {
      await renewLeases(queue, { owner, ids: due, until: new Date(now() + leaseMs) });
      scheduler.renewed(due);
    }
  }

  async #reconcile(): Promise<void> {
    const { queue, now } = this.#o;
    if (now() - this.#lastReconcile < RECONCILE_MS) return;
    this.#lastReconcile = now();
    await reconcileInFlight(queue);
  }

  /**
   * Subscribes to the outbox's notifications when given a listener and not subscribed yet (at
   * most every `RESUBSCRIBE_MS`): beside the rounds, never before them, so a database that
   * cannot be reached at start delays no round, and a subscription that failed is tried again.
   */
  #resubscribe(): void {
    const { listener, now } = this.#o;
    if (!listener || this.#subscription || this.#subscribing) return;
    if (now() - this.#lastSubscribe < RESUBSCRIBE_MS) return;
    this.#lastSubscribe = now();
    this.#subscribing = true;
    void this.#subscribe(listener).then((subscription) => {
      this.#subscribing = false;
      // Stopped meanwhile: nothing is left to wake.
      if (!this.#running) return void subscription?.stop();
      this.#subscription = subscription;
      // What was created before LISTEN took effect notified nobody: one round looks now.
      if (subscription) {
        this.#notified = true;
        this.#wake?.();
      }
    });
  }

  /** Listens for the outbox's notifications; `undefined` when it cannot (the poll finds everything, later). */
  async #subscribe(listener: Listener): Promise<WakeSubscription | undefined> {
    const { queue, onError } = this.#o;
    try {
      const subscription = listenForWork(listener, await wakeChannelName(queue), () => {
        this.#notified = true;
        this.#wake?.();
      });
      const ready = await subscription.ready;
      if (ready.listening) return subscription;
      onError(ready.error);
    } catch (error) {
      onError(error);
    }
    return undefined;
  }
}
