import { createSigner } from '@holdfast/webhook-signer';
import type postgres from 'postgres';
import type { Agent } from 'undici';
import { sendAttempt } from './attempt';
import { classifyAttempt, type Outcome } from './classify';
import { DAY_MS, type HealthContext, type Notifier, recordFailure } from './health';
import { opaqueId } from './id';
import {
  type LeasedRow,
  leaseDue,
  reconcileInFlight,
  releaseLease,
  releaseStripe,
  renewLeases,
} from './lease';
import { type AttemptResult, writeOutcomes } from './outcomes';
import { FAST_MS, isCongestion, MAX_PAUSE_MS } from './pacing';
import { DEFAULT_RETRY_SCHEDULE, retryDelay } from './schedule';
import { pinnedAgent, type Resolver } from './ssrf';

export type { Notifier } from './health';

/** What `onAttempt` is told after every attempt, once its outcome is written. */
export interface AttemptInfo {
  deliveryId: string;
  endpointId: string;
  eventType: string;
  /** HTTP status, or `null` for a timeout, a connection error or a forbidden destination. */
  status: number | null;
  /** `retry`: it will be attempted again; `disabled`: 410 Gone disabled the endpoint. */
  outcome: 'succeeded' | 'retry' | 'dead' | 'disabled';
  latencyMs: number;
  error?: string;
}

export interface DeliveryWorkerOptions {
  sql: postgres.Sql;
  /** Retry delays in ms; n delays mean n + 1 attempts. @defaultValue 1m, 5m, 30m, 2h, 6h, 24h */
  schedule?: readonly number[];
  /** Attempt timeout, 5,000 to 10,000 ms (a receiver gets that long to answer). @defaultValue 10000 */
  timeoutMs?: number;
  /** Tests only: a timeout outside 5 to 10 s. */
  unsafeTimeoutMs?: number;
  /** The ceiling of each endpoint's adaptive in-flight limit, across all workers. @defaultValue 4 */
  perEndpointConcurrency?: number;
  /**
   * Attempts this worker runs at once. One endpoint runs at most three quarters of them, and an
   * attempt running longer than 250 ms moves to a second budget of the same size, so slow
   * receivers never take the slots fast ones need (at most twice this many attempts in all).
   * @defaultValue 32
   */
  concurrency?: number;
  /** How long a lease lives without renewal; running attempts renew theirs. @defaultValue timeout + 30 s */
  leaseMs?: number;
  /** Idle wait between polls. @defaultValue 250 */
  pollMs?: number;
  /** Local development and tests only: allow private and loopback destinations. */
  allowPrivateDestinations?: boolean;
  /** Production mode: https destinations only. */
  production?: boolean;
  resolve?: Resolver;
  /** Consecutive failing days before an endpoint is disabled. @defaultValue 5 */
  disableAfterDays?: number;
  notifier?: Notifier;
  now?: () => number;
  random?: () => number;
  /** Called with errors of the loop itself (the database is down, ...); it carries on. */
  onError?: (error: unknown) => void;
  /** Called after every attempt once its outcome is written (metrics); must not throw. */
  onAttempt?: (info: AttemptInfo) => void;
}

/** A delivery worker: any number may run, in any number of processes. */
export interface DeliveryWorker {
  /** Starts polling. */
  start(): void;
  /** Leases what is due now, attempts it, and resolves with how many were attempted. */
  runOnce(): Promise<number>;
  /** Stops leasing, lets in-flight attempts finish (each is bounded by the timeout), then resolves. */
  stop(): Promise<void>;
}

/** Most results written by one statement; more wait for the next. */
const FLUSH_MAX = 512;
/** Most endpoints whose prepared signer is kept. */
const SIGNERS_MAX = 1000;
/** A worker that leased within this long counts as busy and polls every `BUSY_POLL_MS`. */
const BUSY_MS = 1_000;
const BUSY_POLL_MS = 20;
/** After a round that leased nothing while busy: ask again this soon, this many times. */
const RETRY_MS = 3;
const RETRY_MISSES = 3;
/** An attempt running longer than this (or than a fast answer) stops counting against `concurrency`. */
const SLOT_MS = 250;
/** How often a worker recounts in-flight leases (repairing counts changed by hand). */
const RECONCILE_MS = 10_000;

const INFO_OUTCOME: Record<AttemptResult['nextStatus'], AttemptInfo['outcome']> = {
  succeeded: 'succeeded',
  failed: 'retry',
  dead: 'dead',
};

/**
 * Creates a worker that delivers due deliveries. Each round leases a fair batch
 * across endpoints in one statement (`FOR UPDATE SKIP LOCKED`, leases with an expiry that a dead
 * worker's successor takes over, the per-endpoint in-flight bound held across every worker and
 * process by a shared pacing row and per-worker release stripes), sends the batch concurrently,
 * each attempt signed afresh over the event's exact bytes, sent to the address that passed the
 * SSRF check, redirects never followed, and writes a batch of outcomes in one statement. Each
 * endpoint's limit adapts (AIMD) between 1 and `perEndpointConcurrency`, waits out
 * `Retry-After`, and `maxPerSecond` is held by a token bucket in the same row.
 *
 * @example
 * ```ts
 * const worker = createDeliveryWorker({ sql, schedule: parseRetrySchedule('1s,2s') });
 * worker.start();
 * process.on('SIGTERM', () => worker.stop());
 * ```
 */
export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const timeoutMs = options.unsafeTimeoutMs ?? options.timeoutMs ?? 10_000;
  if (options.unsafeTimeoutMs === undefined && (timeoutMs < 5_000 || timeoutMs > 10_000)) {
    throw new RangeError('timeoutMs must be from 5000 to 10000');
  }
  const { sql } = options;
  const schedule = options.schedule ?? DEFAULT_RETRY_SCHEDULE;
  const perEndpoint = options.perEndpointConcurrency ?? 4;
  const concurrency = options.concurrency ?? 32;
  const leaseMs = options.leaseMs ?? timeoutMs + 30_000;
  const pollMs = options.pollMs ?? 250;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const onError = options.onError ?? ((error: unknown) => console.error('webhook delivery worker:', error));
  const fastMs = Math.min(FAST_MS, timeoutMs / 4);
  const owner = opaqueId('wrk');
  const stripe = releaseStripe(random);
  // One endpoint may run at most three quarters of this worker's slots: a quarter always stays
  // for the others, whatever one endpoint holds.
  const endpointShare = Math.max(1, concurrency - Math.max(1, Math.floor(concurrency / 4)));
  // An attempt running longer than this moves to the second budget (see freeSlots).
  const slotMs = Math.min(SLOT_MS, fastMs);
  const destination = {
    allowPrivateDestinations: options.allowPrivateDestinations ?? false,
    production: options.production ?? false,
    ...(options.resolve ? { resolve: options.resolve } : {}),
  };
  const health: HealthContext = {
    sql,
    now,
    disableAfterMs: (options.disableAfterDays ?? 5) * DAY_MS,
    notifier: options.notifier,
  };
  const agent: Agent = pinnedAgent({ ...destination, connectTimeoutMs: timeoutMs });
  const attemptContext = { destination, agent, timeoutMs };
  /**
   * Attempts by delivery id, from the lease until their outcome is written: when they started,
   * when their lease was last set, the attempt count they were leased at, and whether their
   * answer has arrived (then their place is free for the next lease, see `leaseDue`).
   */
  const inFlight = new Map<
    string,
    { task: Promise<void>; leasedAt: number; started: number; attemptCount: number; answered: boolean }
  >();
  /** Attempts per endpoint still waiting for their answer, for `endpointShare`. */
  const perEndpointRunning = new Map<string, number>();
  /** Endpoints that asked this worker for a pause, until when: no lease for them before the
   *  outcome statement has written the pause for every worker (and until it ends). */
  const paused = new Map<string, number>();
  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let lastReconcile = 0;
  let lastLeased = 0;
  /** Rounds in a row that leased nothing while deliveries flow, and what the last round asked for. */
  let misses = 0;
  let asked = 0;

  // Each endpoint's signer, prepared once (its keys decoded) and kept while its secrets stay
  // the same: every attempt is still signed afresh, with its own timestamp.
  const signers = new Map<string, { secrets: string; signer: ReturnType<typeof createSigner> }>();
  function signerFor(row: LeasedRow, at: number): ReturnType<typeof createSigner> {
    const secrets = [row.secret];
    if (
      row.previous_secret &&
      row.previous_secret_expires_at &&
      row.previous_secret_expires_at.getTime() > at
    ) {
      secrets.push(row.previous_secret);
    }
    const key = secrets.join(' ');
    const cached = signers.get(row.endpoint_id);
    if (cached?.secrets === key) return cached.signer;
    const signer = createSigner({ secrets });
    signers.delete(row.endpoint_id);
    signers.set(row.endpoint_id, { secrets: key, signer });
    if (signers.size > SIGNERS_MAX) {
      const oldest = signers.keys().next();
      if (!oldest.done) signers.delete(oldest.value);
    }
    return signer;
  }

  // Outcomes are written in batches (writeOutcomes). An attempt's task ends when its batch
  // committed, so `stop()` still waits for every outcome to be written.
  const pending: { result: AttemptResult; done: () => void; failed: (error: unknown) => void }[] = [];
  let flushTimer: ReturnType<typeof setTimeout> | undefined;
  let flushing: Promise<void> = Promise.resolve();
  const settling = new Set<Promise<void>>();

  function scheduleFlush(urgent: boolean): void {
    if (pending.length >= FLUSH_MAX || urgent) {
      if (flushTimer) clearTimeout(flushTimer);
      flushTimer = undefined;
      flushing = flushing.then(flush);
      return;
    }
    flushTimer ??= setTimeout(() => {
      flushTimer = undefined;
      flushing = flushing.then(flush);
    }, 1);
  }

  async function flush(): Promise<void> {
    const batch = pending.splice(0, FLUSH_MAX);
    if (batch.length === 0) return;
    if (pending.length > 0) scheduleFlush(false);
    try {
      await writeOutcomes(sql, { owner, stripe, perEndpoint, batch: batch.map((b) => b.result) });
    } catch (error) {
      for (const entry of batch) entry.failed(error);
      return;
    }
    // The rest runs beside the next flushes, not in their chain: a failing endpoint's health
    // statements must not hold up every other endpoint's outcomes.
    const task = settle(batch).finally(() => settling.delete(task));
    settling.add(task);
  }

  async function settle(batch: typeof pending): Promise<void> {
    // The failure side of endpoint health, once per endpoint and kind of failure in the batch,
    // before the attempts' tasks end (so `runOnce` and `stop` see it done).
    const failures = new Map<string, AttemptResult>();
    for (const { result } of batch) {
      if (result.outcome !== 'succeeded') failures.set(`${result.row.endpoint_id} ${result.outcome}`, result);
    }
    for (const result of failures.values()) {
      await recordFailure(health, {
        account: result.row.account_id,
        endpointId: result.row.endpoint_id,
        url: result.row.url,
        outcome: result.outcome,
      }).catch(onError);
    }
    for (const entry of batch) entry.done();
    if (options.onAttempt) {
      for (const { result } of batch) {
        const info: AttemptInfo = {
          deliveryId: result.row.id,
          endpointId: result.row.endpoint_id,
          eventType: result.row.event_type,
          status: result.status ?? null,
          outcome: result.outcome === 'gone' ? 'disabled' : INFO_OUTCOME[result.nextStatus],
          latencyMs: Math.max(0, Math.round(result.finished - result.started)),
          ...(result.error ? { error: result.error } : {}),
        };
        try {
          options.onAttempt(info);
        } catch (error) {
          onError(error);
        }
      }
    }
  }

  /**
   * An attempt's answer is in (or it ended without one): it no longer holds a slot, and its
   * place counts as free in this worker's next lease round. It does not start that round: the
   * next outcome commit or poll does. Waking the loop on every answer ran rounds back to back,
   * and with two processes on one endpoint 42% of them found its pacing row held by the other
   * (bench/delivery: 2 processes 0.85x of 1, against 0.99x this way).
   */
  function answered(row: LeasedRow): void {
    const entry = inFlight.get(row.id);
    if (!entry || entry.answered) return;
    entry.answered = true;
    const left = (perEndpointRunning.get(row.endpoint_id) ?? 1) - 1;
    if (left > 0) perEndpointRunning.set(row.endpoint_id, left);
    else perEndpointRunning.delete(row.endpoint_id);
  }

  async function attempt(row: LeasedRow): Promise<void> {
    const started = now();
    const reply = await sendAttempt(
      {
        url: row.url,
        payload: row.payload,
        eventId: row.event_id,
        signer: signerFor(row, started),
        started,
        now,
      },
      attemptContext,
    );
    const finished = now();
    const outcome: Outcome =
      reply.error && reply.status === undefined ? 'retry' : classifyAttempt(reply.status);
    // A replay starts a fresh schedule (retry_base) while attempt_count keeps the total.
    const retry = row.attempt_count + 1 - row.retry_base;
    const delay = outcome === 'retry' ? retryDelay(schedule, retry, random, reply.retryAfterMs) : undefined;
    const nextStatus =
      outcome === 'succeeded' ? 'succeeded' : outcome === 'retry' && delay !== undefined ? 'failed' : 'dead';
    const pauseUntil =
      reply.retryAfterMs !== undefined && outcome === 'retry'
        ? new Date(finished + Math.min(reply.retryAfterMs, MAX_PAUSE_MS))
        : null;
    // An answer slower than half the timeout (and than a second) is a receiver near its limit:
    // the next ones risk timing out, so its limit shrinks as on a timeout.
    const congested =
      isCongestion(reply.status, reply.forbidden) || finished - started >= Math.max(timeoutMs / 2, FAST_MS);
    if (pauseUntil)
      paused.set(row.endpoint_id, Math.max(paused.get(row.endpoint_id) ?? 0, pauseUntil.getTime()));
    // Its place is free for the next lease now, unless the answer was overload news: then it
    // stays taken until the outcome statement has halved the limit or written the pause.
    if (!congested && pauseUntil === null) answered(row);
    await new Promise<void>((done, failed) => {
      pending.push({
        result: {
          row,
          status: reply.status,
          error: reply.error,
          prefix: reply.prefix,
          outcome,
          nextStatus,
          nextAttemptAt: delay === undefined ? null : new Date(finished + delay),
          started,
          finished,
          congested,
          fast: outcome === 'succeeded' && finished - started <= fastMs,
          pauseUntil,
        },
        done,
        failed,
      });
      // Overload news is written at once, so no worker leases into a pause or a halved limit.
      scheduleFlush(congested || pauseUntil !== null);
    });
  }

  function launch(row: LeasedRow): void {
    const task: Promise<void> = attempt(row)
      .catch(async (error: unknown) => {
        onError(error);
        // Release the lease so another round (or worker) retries it promptly.
        await releaseLease(sql, { owner, id: row.id, stripe }).catch(onError);
      })
      .finally(() => {
        answered(row);
        inFlight.delete(row.id);
        wake?.();
      });
    const at = now();
    perEndpointRunning.set(row.endpoint_id, (perEndpointRunning.get(row.endpoint_id) ?? 0) + 1);
    inFlight.set(row.id, {
      task,
      leasedAt: at,
      started: at,
      attemptCount: row.attempt_count,
      answered: false,
    });
  }

  /** Renews the leases of attempts running for more than a third of the lease. */
  async function renew(): Promise<void> {
    const at = now();
    const due = [...inFlight.entries()].filter(([, entry]) => at - entry.leasedAt > leaseMs / 3);
    if (due.length === 0) return;
    await renewLeases(sql, { owner, ids: due.map(([id]) => id), until: new Date(at + leaseMs) });
    for (const [, entry] of due) entry.leasedAt = at;
  }

  /**
   * Slots free for a lease round. An attempt running longer than `SLOT_MS` moves to a second
   * budget of the same size: slow receivers then hold at most `concurrency` more attempts (and
   * each endpoint its in-flight limit), never for long the slots fast endpoints need.
   */
  function freeSlots(at: number): number {
    let young = 0;
    for (const entry of inFlight.values()) if (!entry.answered && at - entry.started < slotMs) young += 1;
    return Math.min(concurrency - young, 2 * concurrency - inFlight.size);
  }

  async function runOnce(): Promise<number> {
    const at = now();
    const free = freeSlots(at);
    asked = Math.max(0, free);
    if (free <= 0) return 0;
    for (const [endpoint, until] of paused) if (until <= at) paused.delete(endpoint);
    const rows = await leaseDue(sql, {
      owner,
      limit: free,
      perEndpoint,
      at: new Date(at),
      leaseMs,
      paused: [...paused.keys()],
      endpointShare,
      running: perEndpointRunning,
      settled: [...inFlight].flatMap(([id, entry]) =>
        entry.answered ? [{ id, attemptCount: entry.attemptCount }] : [],
      ),
    });
    for (const row of rows) launch(row);
    return rows.length;
  }

  async function housekeeping(): Promise<void> {
    await renew();
    if (now() - lastReconcile >= RECONCILE_MS) {
      lastReconcile = now();
      await reconcileInFlight(sql);
    }
  }

  return {
    runOnce: async () => {
      const count = await runOnce();
      await Promise.all([...inFlight.values()].map((entry) => entry.task));
      return count;
    },
    start() {
      if (running) return;
      running = true;
      const renewal = setInterval(
        () => void housekeeping().catch(onError),
        Math.max(250, Math.min(leaseMs / 3, RECONCILE_MS)),
      );
      loop = (async () => {
        while (running) {
          let leased = 0;
          try {
            leased = await runOnce();
          } catch (error) {
            onError(error);
          }
          if (!running) break;
          if (leased > 0) lastLeased = now();
          // A round that got all it asked for may find more at once; one that got less has
          // taken what there is until attempts complete (which wake the loop) or time passes.
          if (leased > 0 && leased >= asked && freeSlots(now()) > 0) {
            misses = 0;
            continue;
          }
          // While deliveries flow, poll sooner: slots another worker frees are only seen by
          // asking, and waiting a whole idle interval for them left them unused.
          const busy = now() - lastLeased < BUSY_MS;
          // A round that found nothing while deliveries flow most often met an endpoint whose
          // pacing row another worker's lease round held (skipped, not waited for): ask again
          // as soon as that round is likely done, a few times, before waiting for a completion.
          misses = leased === 0 && busy && freeSlots(now()) > 0 ? misses + 1 : 0;
          const wait =
            misses > 0 && misses <= RETRY_MISSES ? RETRY_MS : busy ? Math.min(pollMs, BUSY_POLL_MS) : pollMs;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, wait);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = undefined;
        }
        clearInterval(renewal);
      })();
    },
    async stop() {
      running = false;
      wake?.();
      await loop;
      await Promise.all([...inFlight.values()].map((entry) => entry.task));
      await flushing;
      await Promise.all([...settling]);
      await agent.close();
    },
  };
}
