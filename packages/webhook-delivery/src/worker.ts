import type { Db, Listener } from '@holdfast/db';
import { opaqueId } from '@holdfast/ids';
import { DeliveryLoop } from './delivery-loop';
import { deliveryDispatchers, type EgressOptions } from './egress';
import { DAY_MS, type Notifier } from './health';
import { releaseStripe } from './lease';
import { type AttemptInfo, OutcomeWriter } from './outcome-writer';
import { DEFAULT_RETRY_SCHEDULE } from './schedule';
import { Scheduler } from './scheduler';
import { workerStatements } from './sql/worker';
import type { Resolver } from './ssrf';

export type { Notifier } from './health';
export type { AttemptInfo } from './outcome-writer';

export interface DeliveryWorkerOptions {
  /**
   * The database, on any adapter (`fromPg(pool)`, `fromPostgres(sql)`, ...): a pool, since
   * attempts' outcomes are written while rounds lease. Every statement stands alone (no
   * transaction spans two), so a connection that dies takes one statement with it, and the
   * loop carries on with the next (the error goes to `onError`). A `statement_timeout` on the
   * pool bounds the periodic jobs. On node-postgres, handle the pool's `error` event: an idle
   * client whose backend ended reports it there, and an unhandled one ends the process. The
   * worker never ends the pool; `stop()` first, then end it.
   */
  db: Db;
  /**
   * Wakes idle workers at once when the outbox creates deliveries (`pgListener(pool)`,
   * `postgresListener(sql)`). Without one, new deliveries are found by the poll (`pollMs`).
   */
  listener?: Listener;
  /** The schema the sender's tables are in (as given to `migrations`). @defaultValue the connection's `search_path` */
  schema?: string;
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
  /**
   * The share of this worker's `concurrency` one account's endpoints together may hold while
   * another account's deliveries wait, as a fraction: 0.25 lets one account run
   * `max(1, floor(concurrency / 4))` unanswered attempts (32 of 128) while others have work. The
   * share binds only then: an account alone may use every slot (work-conserving), but its
   * deliveries beyond the share come after every other account's within theirs. And an account
   * whose receivers leave three quarters of `concurrency` unanswered past 250 ms gets no more
   * attempts to those receivers until some end, so a tenant's hanging endpoints never take the
   * slots another tenant's next delivery needs. From above 0 to 1. @defaultValue 0.25
   */
  accountShare?: number;
  /** How long a lease lives without renewal; running attempts renew theirs. @defaultValue timeout + 30 s */
  leaseMs?: number;
  /**
   * Idle wait between polls, which find retries coming due, and new deliveries when no
   * `listener` wakes the worker first. @defaultValue 250
   */
  pollMs?: number;
  /** Local development and tests only: allow private and loopback destinations. */
  allowPrivateDestinations?: boolean;
  /** URL prefixes allowed at private addresses, every other destination keeping the rules (`DestinationOptions`). */
  privateUrlPrefixes?: readonly string[];
  /** Production mode: https destinations only. */
  production?: boolean;
  resolve?: Resolver;
  /**
   * Where deliveries leave from, for receivers' allowlists: `{ addresses }` binds every
   * connection to one of these local addresses (the same one for an endpoint while the list is
   * unchanged; one that cannot be bound stops the worker before its first delivery, reported to
   * `onError` and thrown by `runOnce`), `{ proxy, ranges }` sends through an HTTP CONNECT proxy
   * to the checked address. Publish `egressSourceRanges(egress)`. @defaultValue the system's choice
   */
  egress?: EgressOptions;
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

/** The share of a worker's slots one account holds while others wait, unless `accountShare` says otherwise. */
const DEFAULT_ACCOUNT_SHARE = 0.25;

/** A delivery worker: any number may run, in any number of processes. */
export interface DeliveryWorker {
  /** Starts polling. */
  start(): void;
  /** Leases what is due now, attempts it, and resolves with how many were attempted. */
  runOnce(): Promise<number>;
  /** Stops leasing, lets in-flight attempts finish (each is bounded by the timeout), then resolves. */
  stop(): Promise<void>;
}

/**
 * Creates a worker that delivers due deliveries. Each round leases a fair batch
 * across endpoints in one statement (`FOR UPDATE SKIP LOCKED`, leases with an expiry that a dead
 * worker's successor takes over, the per-endpoint in-flight bound held across every worker and
 * process by a shared pacing row and per-worker release stripes), sends the batch concurrently,
 * each attempt signed afresh over the event's exact bytes, sent to the address that passed the
 * SSRF check, redirects never followed, and writes a batch of outcomes in one statement. Each
 * endpoint's limit adapts (AIMD) between 1 and `perEndpointConcurrency`, waits out
 * `Retry-After`, and `maxPerSecond` is held by a token bucket in the same row. What a round may
 * take and when the next one runs is decided by the pure `Scheduler` (`scheduler.ts`).
 *
 * @example
 * ```ts
 * const worker = createDeliveryWorker({ db: fromPg(pool), listener: pgListener(pool) });
 * worker.start();
 * process.on('SIGTERM', () => worker.stop());
 * ```
 */
export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const timeoutMs = options.unsafeTimeoutMs ?? options.timeoutMs ?? 10_000;
  if (options.unsafeTimeoutMs === undefined && (timeoutMs < 5_000 || timeoutMs > 10_000)) {
    throw new RangeError('timeoutMs must be from 5000 to 10000');
  }
  const queue = { db: options.db, sql: workerStatements(options.schema) };
  const perEndpoint = options.perEndpointConcurrency ?? 4;
  const concurrency = options.concurrency ?? 32;
  const accountShare = options.accountShare ?? DEFAULT_ACCOUNT_SHARE;
  if (!(accountShare > 0 && accountShare <= 1))
    throw new RangeError('accountShare must be above 0 and at most 1');
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const onError = options.onError ?? ((error: unknown) => console.error('webhook delivery worker:', error));
  const owner = opaqueId('wrk');
  const stripe = releaseStripe(random);
  const destination = {
    allowPrivateDestinations: options.allowPrivateDestinations ?? false,
    production: options.production ?? false,
    ...(options.privateUrlPrefixes ? { privateUrlPrefixes: options.privateUrlPrefixes } : {}),
    ...(options.resolve ? { resolve: options.resolve } : {}),
  };
  const dispatchers = deliveryDispatchers({
    ...destination,
    connectTimeoutMs: timeoutMs,
    egress: options.egress,
  });
  let stopped = false;
  const scheduler = new Scheduler({
    concurrency,
    accountShare: Math.max(1, Math.floor(concurrency * accountShare)),
    perEndpoint,
    timeoutMs,
    pollMs: options.pollMs ?? 250,
    schedule: options.schedule ?? DEFAULT_RETRY_SCHEDULE,
    now,
    random,
  });
  const health = {
    queue,
    now,
    disableAfterMs: (options.disableAfterDays ?? 5) * DAY_MS,
    notifier: options.notifier,
  };
  const writer = new OutcomeWriter({
    queue,
    owner,
    stripe,
    perEndpoint,
    health,
    onError,
    onAttempt: options.onAttempt,
  });
  const loop = new DeliveryLoop({
    queue,
    owner,
    stripe,
    now,
    onError,
    scheduler,
    writer,
    listener: options.listener,
    leaseMs: options.leaseMs ?? timeoutMs + 30_000,
    attempts: { destination, dispatchers, timeoutMs },
  });
  return {
    runOnce: async () => {
      await dispatchers.ready;
      const count = await loop.round();
      await loop.settled();
      return count;
    },
    start: () => {
      // An egress address that cannot be bound: no delivery leaves from elsewhere.
      if (dispatchers.ready === undefined) loop.start();
      else dispatchers.ready.then(() => (stopped ? undefined : loop.start()), onError);
    },
    async stop() {
      stopped = true;
      await loop.stop();
      await dispatchers.close();
    },
  };
}
