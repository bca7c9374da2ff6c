import { type Db, type Transaction, toHex } from '@holdfast/db';
import { postgresVersionStore } from './postgres-stores';
import type { HandOff, WebhookEvent } from './receive';
import { statements } from './statements';
import { storableJson } from './storable-json';
import { versionOf } from './versions';

/** A stored event, as the inbox processor hands it to `handle`. */
export interface InboxEntry {
  /** The inbox's own id of the event. */
  id: string;
  /** The receiver it arrived at. */
  scope: string;
  /** Whom it belongs to, when the app said so at `enqueue`. */
  tenant: string | null;
  webhookId: string;
  type: string | null;
  /** The payload as stored (U+0000 and lone surrogates as U+FFFD); the exact bytes are in `body`. */
  payload: unknown;
  /** Attempts made before this one. */
  attempts: number;
}

export interface PostgresInboxOptions {
  /** The schema {@link migrations} put the tables in. Default: the connection's `search_path`. */
  schema?: string;
  /** Seconds an accepted id stays recorded in `holdfast_webhook_dedup`. Default 7 days. */
  retentionSeconds?: number;
  /** The id of a new inbox entry. Default `inb_` and 32 random hex digits. */
  newId?: () => string;
  /** Current time in ms. Default `Date.now`. */
  now?: () => number;
}

/** Options of {@link PostgresInbox.process}; `Tx` is your driver's transaction. */
export interface InboxProcessOptions<Tx> {
  /** Event types to process (a list or a test); any other is marked `ignored`. Default: all. */
  types?: readonly string[] | ((type: string) => boolean);
  /**
   * The resource and version an entry carries, for stale-event discard: an entry whose version
   * is not above the newest one processed for that resource (per tenant, else per scope) is
   * marked `stale`. Return `undefined` when the entry has no usable version.
   */
  versions?: (entry: InboxEntry) => { resource: string; version: number | string | Date } | undefined;
  /**
   * Processes one entry inside the transaction that marks it: what it writes through `tx` (your
   * driver's transaction) or `db` (the same transaction as a `Db`) commits with the mark;
   * throwing rolls that back alone and retries the entry later.
   */
  handle?: (entry: InboxEntry, tx: Tx, db: Db) => Promise<void> | void;
  /** Entries per call at most. Default 50. */
  batch?: number;
  /** Attempts before a failing entry is set aside as `failed`. Default 5. */
  maxAttempts?: number;
  /** Where failures are reported. Default `console.error`. */
  log?: (message: string) => void;
}

export interface PostgresInbox {
  /**
   * Stores a verified event as `pending` and claims its id in `holdfast_webhook_dedup`, in one
   * statement: `{ duplicate: true }` when the id was already recorded. Use it as the receiver's
   * `onEvent`; `scope` is the receiver, `tenant` whom the event belongs to.
   */
  enqueue(event: WebhookEvent, target: { scope: string; tenant?: string }): Promise<HandOff>;
  /**
   * Works through up to `batch` due `pending` entries, each in a transaction of its own made by
   * `transaction`, one of your driver: `@holdfast/db` builds one per driver, typed with its
   * transaction (`pgTransaction(pool)`, `postgresTransaction(sql)`, `drizzleTransaction(db, sql)`,
   * `kyselyTransaction(db)`, `prismaTransaction(prisma)`). Resolves to how many were handled.
   */
  process<Tx>(transaction: Transaction<Tx>, options?: InboxProcessOptions<Tx>): Promise<number>;
}

interface Row {
  id: string;
  scope: string;
  tenant: string | null;
  webhook_id: string;
  type: string | null;
  payload: unknown;
  attempts: number;
  received_at: string;
}

const DAY_MS = 86_400_000;

type Outcome = { status: 'processed' | 'stale' | 'ignored'; resource: string | null };

function matcher(types: InboxProcessOptions<unknown>['types']): (type: string | null) => boolean {
  if (types === undefined) return () => true;
  const known = typeof types === 'function' ? types : (type: string) => types.includes(type);
  return (type) => type !== null && known(type);
}

/**
 * What is kept of a processing failure: the SQLSTATE or error name and the message, never payload
 * data. A data exception's message (SQLSTATE class 22) quotes the offending value, and a
 * `SyntaxError`'s quotes the text, so theirs are withheld; a driver error's other properties (its
 * row detail, query parameters) are never read.
 */
function describeFailure(error: unknown): string {
  const code =
    error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
  const name = error instanceof Error ? error.name : typeof error;
  const quotesData = error instanceof SyntaxError || code?.startsWith('22') === true;
  const message = !(error instanceof Error)
    ? ''
    : quotesData
      ? '(message withheld)'
      : error.message.slice(0, 200);
  return code ? `${name} (SQLSTATE ${code}): ${message}` : `${name}: ${message}`;
}

/** PostgreSQL's "no partition of relation ... found for row" (a check violation, 23514). */
function missingPartition(error: unknown): boolean {
  return (
    error instanceof Error &&
    'code' in error &&
    error.code === '23514' &&
    /no partition of relation/.test(error.message)
  );
}

function defaultId(): string {
  return `inb_${globalThis.crypto.randomUUID().replaceAll('-', '')}`;
}

/**
 * A durable inbox on PostgreSQL through any driver's `Db` (Standard Webhooks, https://www.standardwebhooks.com/: verify,
 * record, acknowledge, then process in the background). `enqueue` stores each verified event
 * with its exact bytes and a `jsonb` view, claiming its id in the same statement, so a crash
 * never leaves an id recorded whose event was lost. `process` leases due entries with
 * `FOR UPDATE SKIP LOCKED` (any number of processors in any number of processes), each in a
 * transaction of its own: one whose processing fails is rolled back alone, retried after
 * 2, 4, 8... seconds and set aside as `failed` (with the error kept in `last_error`) after
 * `maxAttempts`, so it never holds up the others. Needs {@link migrations} applied (with the
 * same `schema`).
 *
 * @example
 * ```ts
 * const inbox = postgresInbox(fromPg(pool));
 * app.post('/hooks/:name', webhookReceiver({
 *   secrets: (c) => receivers.get(c.req.param('name')),
 *   onEvent: (event, c) => inbox.enqueue(event, { scope: c.req.param('name') }),
 * }));
 * // One round at a time: the next is scheduled once the last has ended, never beside it.
 * const work = () => inbox.process(pgTransaction(pool), {
 *   handle: (entry, client) => client.query('insert into paid (id) values ($1)', [entry.webhookId]),
 * }).catch(console.error).finally(() => setTimeout(work, 1000));
 * void work();
 * ```
 */
export function postgresInbox(db: Db, options: PostgresInboxOptions = {}): PostgresInbox {
  const retentionMs = (options.retentionSeconds ?? 7 * 86_400) * 1000;
  if (!Number.isSafeInteger(retentionMs) || retentionMs < DAY_MS / 144) {
    throw new RangeError('retentionSeconds must be an integer above 600, well beyond the tolerance');
  }
  const now = options.now ?? Date.now;
  const newId = options.newId ?? defaultId;
  const sql = statements(options.schema);
  const schema = options.schema === undefined ? {} : { schema: options.schema };
  return {
    async enqueue(event, target) {
      const id = newId();
      const at = now();
      // Any JSON value the signature covers is stored: an object, and also null, a number, a
      // string or an array (they have no type).
      const payload = storableJson(event.payload);
      const type =
        typeof payload === 'object' && payload !== null && !Array.isArray(payload) ? payload.type : null;
      const values = [
        `${target.scope} ${event.id}`,
        new Date(at + retentionMs).toISOString(),
        new Date(at).toISOString(),
        id,
        target.scope,
        target.tenant ?? null,
        event.id,
        typeof type === 'string' && type.length > 0 ? type : null,
        JSON.stringify([payload]),
        toHex(event.body),
      ];
      let inserted: unknown[];
      try {
        inserted = await db.query(sql.enqueue, values);
      } catch (error) {
        // No partition holds today yet (the maintenance has not run): made here, then once more.
        if (!missingPartition(error)) throw error;
        await db.query(sql.createPartitions, [null, null, 1]);
        inserted = await db.query(sql.enqueue, values);
      }
      if (inserted.length > 0) return { duplicate: false, receipt: id };
      const [existing] = await db.query<{ id: string }>(sql.existing, [target.scope, event.id]);
      return existing ? { duplicate: true, receipt: existing.id } : { duplicate: true };
    },

    async process<Tx>(transaction: Transaction<Tx>, processOptions: InboxProcessOptions<Tx> = {}) {
      const {
        batch = 50,
        maxAttempts = 5,
        log = (message: string) => console.error(message),
      } = processOptions;
      if (typeof transaction !== 'function') {
        throw new TypeError('process needs a transaction of your driver (pgTransaction(pool), ...)');
      }
      const wanted = matcher(processOptions.types);
      let handled = 0;
      // Each entry in a transaction of its own: one whose processing fails rolls back alone,
      // whatever the driver does with an error inside a transaction (postgres.js fails the
      // whole transaction on any failed statement, even one the handler caught).
      while (handled < batch) {
        let leased: Row | undefined;
        try {
          await transaction(async (tx, txDb) => {
            [leased] = await txDb.query<Row>(sql.lease, [1]);
            if (leased === undefined) return;
            const entry: InboxEntry = {
              id: leased.id,
              scope: leased.scope,
              tenant: leased.tenant,
              webhookId: leased.webhook_id,
              type: leased.type,
              payload: leased.payload,
              attempts: leased.attempts,
            };
            const outcome = await (async (): Promise<Outcome> => {
              if (!wanted(entry.type)) return { status: 'ignored', resource: null };
              const at = processOptions.versions?.(entry);
              if (at) {
                const key = `${entry.tenant ?? entry.scope} ${at.resource}`;
                if (!(await postgresVersionStore(txDb, schema).advance(key, versionOf(at.version)))) {
                  return { status: 'stale', resource: at.resource };
                }
              }
              await processOptions.handle?.(entry, tx, txDb);
              return { status: 'processed', resource: at?.resource ?? null };
            })();
            await txDb.query(sql.done, [entry.id, outcome.status, outcome.resource, leased.received_at]);
          });
        } catch (error) {
          // Nothing leased: the database failed before any entry, which is the caller's to see.
          const row: Row | undefined = leased;
          if (row === undefined) throw error;
          const attempts = row.attempts + 1;
          const failed = attempts >= maxAttempts;
          const reason = describeFailure(error);
          log(`inbox: entry ${row.id} failed (attempt ${attempts}${failed ? ', set aside' : ''}): ${reason}`);
          // Recorded only while the entry is as it was leased: a processor that took it after
          // the rollback has the newer word.
          await db.query(sql.failed, [row.id, attempts, reason, failed, 2 ** attempts, row.received_at]);
        }
        if (leased === undefined) break;
        handled += 1;
      }
      return handled;
    },
  };
}
