import { createDeliveryWorker, purgeDeliveryHistory } from '@holdfast/webhook-delivery/postgres';
import { postgresDedupStore } from '@holdfast/webhook-verifier/postgres';
import type postgres from 'postgres';
import type { Deps } from './context';
import { processInbox } from './inbox';
import { observeAttempt } from './observability/delivery-attempts';
import { errorLine } from './observability/logger';

/** A background loop that can be stopped; `stop` waits for the round in flight. */
export interface Loop {
  stop(): Promise<void>;
}

/**
 * Runs `tick` repeatedly: again at once while it reports work done, otherwise after `idleMs`.
 * Errors are logged and the loop carries on (a database restart must not end the worker).
 */
export function startLoop(
  name: string,
  tick: () => Promise<number>,
  idleMs: number,
  log: (message: string) => void,
): Loop {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake: (() => void) | undefined;
  const done = (async () => {
    while (!stopped) {
      let handled = 0;
      try {
        handled = await tick();
      } catch (error) {
        log(`${name}: ${errorLine(error, false)}`);
      }
      if (stopped) break;
      if (handled > 0) continue;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, idleMs);
      });
    }
  })();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      wake?.();
      await done;
    },
  };
}

export interface InboxProcessorOptions {
  readonly sql: postgres.Sql;
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
 * const inbox = startInboxProcessor({ sql });
 * await inbox.stop();
 * ```
 */
export function startInboxProcessor(options: InboxProcessorOptions): Loop {
  return startLoop(
    'inbox processor',
    () => processInbox(options.sql, 50, options.log),
    options.idleMs ?? 250,
    options.log ?? ((message) => console.error(message)),
  );
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
  const { sql, config } = deps;
  const worker = createDeliveryWorker({
    sql,
    ...(config.retrySchedule ? { schedule: config.retrySchedule } : {}),
    allowPrivateDestinations: config.allowPrivateDestinations,
    production: config.production,
    disableAfterDays: config.disableAfterDays,
    now: deps.now,
    concurrency: config.delivery.concurrency,
    perEndpointConcurrency: config.delivery.perEndpoint,
    pollMs: config.delivery.pollMs,
    onAttempt: observeAttempt(deps.metrics, deps.now),
    ...(config.egress ? { egress: config.egress } : {}),
  });
  worker.start();
  const inbox = startInboxProcessor({ sql });
  const purge = startLoop(
    'delivery history purge',
    async () => {
      await purgeDeliveryHistory(sql);
      // Inbound ids past their retention: the receiver's inbox still refuses them twice.
      await postgresDedupStore(sql).purge(deps.now());
      return 0;
    },
    60 * 60 * 1000,
    (message) => console.error(message),
  );
  return {
    async stop() {
      await Promise.all([worker.stop(), inbox.stop(), purge.stop()]);
    },
  };
}
