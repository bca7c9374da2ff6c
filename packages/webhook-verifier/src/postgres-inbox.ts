import type { Sql, TransactionSql } from 'postgres';
import { postgresVersionStore } from './postgres-stores';
import type { HandOff, WebhookEvent } from './receive';
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

/** Where an event is filed: its receiver, and optionally whom it belongs to. */
export interface InboxTarget {
  scope: string;
  tenant?: string;
}

export interface PostgresInboxOptions {
  /** Seconds an accepted id stays recorded in `holdfast_webhook_dedup`. Default 7 days. */
  retentionSeconds?: number;
  /** The id of a new inbox entry. Default `inb_` and 32 random hex digits. */
  newId?: () => string;
  /** Current time in ms. Default `Date.now`. */
  now?: () => number;
}

export interface InboxProcessOptions {
  /** Event types to process (a list or a test); any other is marked `ignored`. Default: all. */
  types?: readonly string[] | ((type: string) => boolean);
  /**
   * The resource and version an entry carries, for stale-event discard: an entry whose version
   * is not above the newest one processed for that resource (per tenant, else per scope) is
   * marked `stale`. Return `undefined` when the entry has no usable version.
   */
  versions?: (entry: InboxEntry) => { resource: string; version: number | string | Date } | undefined;
  /** Processes one entry, inside the transaction that marks it; throwing retries it later. */
  handle?: (entry: InboxEntry, tx: TransactionSql) => Promise<void> | void;
  /** Entries per round. Default 50. */
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
   * `onEvent`.
   */
  enqueue(event: WebhookEvent, target: InboxTarget): Promise<HandOff>;
  /** Works through due `pending` entries once; resolves to how many were handled. */
  process(options?: InboxProcessOptions): Promise<number>;
}

interface Row {
  id: string;
  scope: string;
  tenant: string | null;
  webhook_id: string;
  type: string | null;
  payload: unknown;
  attempts: number;
}

const DAY_MS = 86_400_000;

function matcher(types: InboxProcessOptions['types']): (type: string | null) => boolean {
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

function defaultId(): string {
  return `inb_${globalThis.crypto.randomUUID().replaceAll('-', '')}`;
}

/**
 * A durable inbox on PostgreSQL (Standard Webhooks, https://www.standardwebhooks.com/: verify,
 * record, acknowledge, then process in the background). `enqueue` stores each verified event
 * with its exact bytes and a `jsonb` view, claiming its id in the same statement, so a crash
 * never leaves an id recorded whose event was lost. `process` leases due entries with
 * `FOR UPDATE SKIP LOCKED` (any number of processors in any number of processes); each entry
 * runs in its own savepoint: one whose processing fails is rolled back alone, retried after
 * 2, 4, 8... seconds and set aside as `failed` (with the error kept in `last_error`) after
 * `maxAttempts`, so it never holds up the others. Needs {@link migrations} applied.
 *
 * @example
 * ```ts
 * const inbox = postgresInbox(sql);
 * app.post('/hooks/:name', webhookReceiver({
 *   secrets: (c) => receivers.get(c.req.param('name')),
 *   onEvent: (event, c) => inbox.enqueue(event, { scope: c.req.param('name') }),
 * }));
 * // One round at a time: the next is scheduled once the last has ended, never beside it.
 * const work = () => inbox.process({ handle: (entry) => apply(entry.payload) }).catch(console.error).finally(() => setTimeout(work, 1000));
 * void work();
 * ```
 */
export function postgresInbox(sql: Sql, options: PostgresInboxOptions = {}): PostgresInbox {
  const retentionMs = (options.retentionSeconds ?? 7 * 86_400) * 1000;
  if (!Number.isSafeInteger(retentionMs) || retentionMs < DAY_MS / 144) {
    throw new RangeError('retentionSeconds must be an integer above 600, well beyond the tolerance');
  }
  const now = options.now ?? Date.now;
  const newId = options.newId ?? defaultId;
  return {
    async enqueue(event, target) {
      const id = newId();
      const key = `${target.scope} ${event.id}`;
      const at = now();
      // Any JSON value the signature covers is stored: an object, and also null, a number, a
      // string or an array (they have no type). Wrapped in a one-element array and taken out in SQL,
      // since a JSON null given as a parameter is SQL NULL, and the insert was a 500.
      const payload = storableJson(event.payload);
      const type =
        typeof payload === 'object' && payload !== null && !Array.isArray(payload) ? payload.type : null;
      const inserted = await sql<{ id: string }[]>`
        with claim as (
          insert into holdfast_webhook_dedup (key, expires_at)
          values (${key}, ${new Date(at + retentionMs)})
          on conflict (key) do update set expires_at = excluded.expires_at, created_at = now()
            where holdfast_webhook_dedup.expires_at <= ${new Date(at)}
          returning key
        )
        insert into holdfast_webhook_inbox (id, scope, tenant, webhook_id, type, payload, body)
        select ${id}, ${target.scope}, ${target.tenant ?? null}, ${event.id},
          ${typeof type === 'string' && type.length > 0 ? type : null}, (${sql.json([payload])}::jsonb -> 0), ${event.body}
        from claim
        on conflict (scope, webhook_id) do nothing
        returning id`;
      if (inserted.length > 0) return { duplicate: false, receipt: id };
      const [existing] = await sql<{ id: string }[]>`
        select id from holdfast_webhook_inbox where scope = ${target.scope} and webhook_id = ${event.id}`;
      return existing ? { duplicate: true, receipt: existing.id } : { duplicate: true };
    },

    async process(processOptions = {}) {
      const {
        batch = 50,
        maxAttempts = 5,
        log = (message: string) => console.error(message),
      } = processOptions;
      const wanted = matcher(processOptions.types);
      return sql.begin(async (tx) => {
        const rows = await tx<Row[]>`
          select id, scope, tenant, webhook_id, type, payload, attempts from holdfast_webhook_inbox
          where status = 'pending' and (next_attempt_at is null or next_attempt_at <= now())
          order by received_at, id
          limit ${batch}
          for update skip locked`;
        for (const row of rows) {
          const entry: InboxEntry = {
            id: row.id,
            scope: row.scope,
            tenant: row.tenant,
            webhookId: row.webhook_id,
            type: row.type,
            payload: row.payload,
            attempts: row.attempts,
          };
          let outcome: { status: 'processed' | 'stale' | 'ignored'; resource: string | null };
          try {
            outcome = await tx.savepoint(async (sp) => {
              if (!wanted(entry.type)) return { status: 'ignored', resource: null };
              const at = processOptions.versions?.(entry);
              if (at) {
                const key = `${entry.tenant ?? entry.scope} ${at.resource}`;
                if (!(await postgresVersionStore(sp).advance(key, versionOf(at.version)))) {
                  return { status: 'stale', resource: at.resource };
                }
              }
              await processOptions.handle?.(entry, sp);
              return { status: 'processed', resource: at?.resource ?? null };
            });
          } catch (error) {
            const attempts = row.attempts + 1;
            const failed = attempts >= maxAttempts;
            const reason = describeFailure(error);
            log(
              `inbox: entry ${row.id} failed (attempt ${attempts}${failed ? ', set aside' : ''}): ${reason}`,
            );
            await tx`
              update holdfast_webhook_inbox
              set attempts = ${attempts}, last_error = ${reason},
                  status = ${failed ? 'failed' : 'pending'},
                  next_attempt_at = ${failed ? null : tx`now() + make_interval(secs => ${2 ** attempts})`},
                  processed_at = ${failed ? tx`date_trunc('milliseconds', now())` : null}
              where id = ${row.id}`;
            continue;
          }
          await tx`
            update holdfast_webhook_inbox
            set status = ${outcome.status}, resource = ${outcome.resource},
                attempts = attempts + 1, next_attempt_at = null,
                processed_at = date_trunc('milliseconds', now())
            where id = ${row.id}`;
        }
        return rows.length;
      });
    },
  };
}
