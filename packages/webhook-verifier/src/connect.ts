import type { Db } from '@holdfast/db';
import { fromPostgres } from '@holdfast/db/postgres';
import postgres from 'postgres';
import {
  type InboxEntry,
  type InboxProcessOptions,
  type InboxTarget,
  type PostgresInboxOptions,
  postgresInbox,
} from './postgres-inbox';
import { postgresDedupStore } from './postgres-stores';
import type { HandOff, WebhookEvent } from './receive';

/** {@link PostgresInboxOptions} with a connection string in place of a postgres.js client. */
export interface InboxUrlOptions extends PostgresInboxOptions {
  /** `postgres://user@host:5432/db`: the inbox opens its own pool on it and ends it on `end()`. */
  readonly connectionString: string;
  /** Connections in that pool. @defaultValue 4 */
  readonly max?: number;
}

/** {@link InboxProcessOptions} whose `handle` writes through a driver-neutral `db`. */
export interface InboxUrlProcessOptions extends Omit<InboxProcessOptions, 'handle'> {
  /**
   * Processes one entry inside the transaction that marks it: statements sent through `db`
   * (`db.query(text, values)`, placeholders `$1..$n`) commit with the mark; throwing rolls them
   * back and retries the entry later.
   */
  readonly handle?: (entry: InboxEntry, db: Db) => Promise<void> | void;
}

/** The durable inbox on its own connections, from {@link inboxFromUrl}. */
export interface UrlInbox {
  /** As {@link PostgresInbox.enqueue}: the receiver's `onEvent`. */
  enqueue(event: WebhookEvent, target: InboxTarget): Promise<HandOff>;
  /** As {@link PostgresInbox.process}, `handle` given the entry's transaction as a `db`. */
  process(options?: InboxUrlProcessOptions): Promise<number>;
  /** Deletes the accepted ids in `holdfast_webhook_dedup` expired at `now` (ms); resolves to how many. */
  purge(now?: number): Promise<number>;
  /** Ends the pool (after the calls in progress). */
  end(): Promise<void>;
}

/**
 * The durable inbox ({@link postgresInbox}) and the purge of its accepted ids, on a pool of
 * their own opened from a connection string: for a service on node-postgres, Drizzle, Kysely
 * or Prisma, which then needs no postgres.js code of its own to receive, process and purge.
 * `handle` gets the entry's transaction as a `db` (text with `$1..$n` and values in, rows out),
 * so its writes commit with the entry's mark.
 *
 * @example
 * ```ts
 * const inbox = inboxFromUrl({ connectionString: process.env.DATABASE_URL ?? '' });
 * app.post('/hooks/orders', webhookReceiver({ secrets, onEvent: (event) => inbox.enqueue(event, { scope: 'orders' }) }));
 * // Each job one round at a time: the next round is scheduled once the last has ended.
 * const work = () => inbox.process({
 *   handle: (entry, db) => db.query('insert into paid (id) values ($1)', [entry.webhookId]),
 * }).catch(console.error).finally(() => setTimeout(work, 1000).unref());
 * const purge = () => inbox.purge().catch(console.error).finally(() => setTimeout(purge, 3_600_000).unref());
 * void work();
 * void purge();
 * process.on('SIGTERM', () => void inbox.end());
 * ```
 */
export function inboxFromUrl(options: InboxUrlOptions): UrlInbox {
  const { connectionString, max = 4, ...inboxOptions } = options;
  const sql = postgres(connectionString, { max, onnotice: () => {} });
  const inbox = postgresInbox(sql, inboxOptions);
  const dedup = postgresDedupStore(sql, inboxOptions.now === undefined ? {} : { now: inboxOptions.now });
  const now = inboxOptions.now ?? Date.now;
  return {
    enqueue: (event, target) => inbox.enqueue(event, target),
    process(processOptions = {}) {
      const { handle, ...rest } = processOptions;
      return inbox.process(
        handle === undefined ? rest : { ...rest, handle: (entry, tx) => handle(entry, fromPostgres(tx)) },
      );
    },
    purge: (at = now()) => dedup.purge(at),
    end: () => sql.end({ timeout: 5 }),
  };
}
