import { type Db, type Loop, startLoop } from '@holdfast/db';
import { errorLine } from '@holdfast/problem-details';
import { createDeliveryWorker, maintainDeliveryHistory } from '@holdfast/webhook-delivery';
import { postgresDedupStore } from '@holdfast/webhook-verifier/postgres';
import type { Database, Deps } from './context';
import { processInbox } from './inbox';
import { observeAttempt } from './observability/delivery-attempts';

/**
 * How long one statement of a background loop may run on PostgreSQL (the workers' pool has no
 * timeout of its own): past it the statement is cut, the round fails and the next round tries
 * again, so a round cannot run on behind a lock or a bad plan. PGlite enforces none.
 */
export const LOOP_STATEMENT_TIMEOUT_MS = 30_000;

/**
 * Cuts every later statement of transaction `tx` at `ms` (`SET LOCAL statement_timeout`, with a
 * bound value): a round of a background loop on the workers' pool, which has no timeout.
 */
export async function limitStatements(tx: Db, ms = LOOP_STATEMENT_TIMEOUT_MS): Promise<void> {
  await tx.query("select set_config('statement_timeout', $1::text, true)", [String(ms)]);
}

/** A {@link Db} running each statement in a transaction of its own, under {@link limitStatements}. */
function limitedDb(database: Database, ms = LOOP_STATEMENT_TIMEOUT_MS): Db {
  return {
    async query<Row>(text: string, values: readonly unknown[] = []): Promise<Row[]> {
      return database.transaction(async (_tx, db) => {
        await limitStatements(db, ms);
        return db.query<Row>(text, values);
      });
    },
  };
}

export interface InboxProcessorOptions {
  readonly database: Database;
  /** How long to wait when the inbox is empty. @defaultValue 250 */
  readonly idleMs?: number;
  readonly log?: (message: string) => void;
}

/**
 * Starts the inbox processor: verified inbound events queued by `/hooks/{name}` are processed
 * in the background (SPEC section 6, verification step 4), never inline in the request.
 *
 * @example
 * ```ts
 * const inbox = startInboxProcessor({ database: deps });
 * await inbox.stop();
 * ```
 */
export function startInboxProcessor(options: InboxProcessorOptions): Loop {
  const log = options.log ?? ((message) => console.error(message));
  return startLoop(() => processInbox(options.database, 50, log), {
    idleMs: options.idleMs ?? 250,
    onError: (error) => log(`inbox processor: ${errorLine(error, false)}`),
  });
}

/**
 * Everything a worker process runs for webhooks: the delivery workers of
 * `@holdfast/webhook-delivery` (schedule, private destinations and disabling from the
 * configuration), the inbox processor for verified inbound events, and the retention purge.
 *
 * @example
 * ```ts
 * const workers = startWebhookWorkers(deps);
 * await workers.stop();
 * ```
 */
export function startWebhookWorkers(deps: Deps): Loop {
  const { config } = deps;
  const worker = createDeliveryWorker({
    db: deps.db,
    ...(deps.listener ? { listener: deps.listener } : {}),
    ...(config.retrySchedule ? { schedule: config.retrySchedule } : {}),
    allowPrivateDestinations: config.allowPrivateDestinations,
    ...(deps.privateUrlPrefixes ? { privateUrlPrefixes: deps.privateUrlPrefixes } : {}),
    production: config.production,
    disableAfterDays: config.disableAfterDays,
    now: deps.now,
    concurrency: config.delivery.concurrency,
    perEndpointConcurrency: config.delivery.perEndpoint,
    pollMs: config.delivery.pollMs,
    accountShare: config.delivery.accountShare,
    onAttempt: observeAttempt(deps.metrics, deps.now),
    ...(config.egress ? { egress: config.egress } : {}),
  });
  // The delivery worker starts once the first maintenance has run (whatever its outcome): the
  // partitions of the coming days exist before it leases, and that run's locks meet no worker.
  let stopping = false;
  let started = false;
  const startWorker = () => {
    if (stopping || started) return;
    started = true;
    worker.start();
  };
  const inbox = startInboxProcessor({ database: deps });
  // A run that gave up waiting for a lock (the tables busy) is tried again in a minute.
  let retrySoon = false;
  const purge = startLoop(
    async () => {
      // Partitions ahead and whole partitions behind the retention, each step its own short
      // transaction under the loops' statement timeout.
      retrySoon = false;
      try {
        const done = await maintainDeliveryHistory(limitedDb(deps), {
          now: deps.now,
          retentionDays: config.deliveryRetentionDays,
        });
        retrySoon = done.busy;
      } finally {
        startWorker();
      }
      // Inbound ids past their retention: the receiver's inbox still refuses them twice.
      await deps.transaction(async (_tx, db) => {
        await limitStatements(db);
        await postgresDedupStore(db).purge(deps.now());
      });
      return 0;
    },
    {
      idleMs: () => (retrySoon ? 60 * 1000 : 60 * 60 * 1000),
      onError: (error) => console.error(`delivery history maintenance: ${errorLine(error, false)}`),
    },
  );
  return {
    async stop() {
      stopping = true;
      await Promise.all([worker.stop(), inbox.stop(), purge.stop()]);
    },
  };
}
