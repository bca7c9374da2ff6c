import { opaqueId } from '@holdfast/opaque-id';
import { type InboxEntry, type PostgresInbox, postgresInbox } from '@holdfast/webhook-verifier/postgres';
import type postgres from 'postgres';

/**
 * What this server's receiver does with verified events: the durable inbox of
 * `@holdfast/webhook-verifier/postgres` (stored at once, processed in the background with
 * retries and failure records), with the server's two rules for processing: which event types
 * it acts on, and which version of which resource an event carries.
 */

/** Attempts before an event whose processing keeps failing is set aside as `failed`. */
export const INBOX_MAX_ATTEMPTS = 5;

/**
 * Event types this receiver acts on: the resources of our own contract. Any other type is
 * acknowledged (SPEC section 6: "an event type the receiver does not recognise is answered with
 * 200") and marked `ignored`.
 */
const KNOWN_TYPE = /^(order|refund|payment|payment_method|subscription)\.[a-z_]+$/;

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** The event's `sequence`, when it is a usable one (a non-negative safe integer, or its digits). */
export function sequenceOf(payload: unknown): number | null {
  const raw = record(payload)?.sequence;
  const sequence = typeof raw === 'string' && /^\d{1,15}$/.test(raw) ? Number(raw) : raw;
  return typeof sequence === 'number' && Number.isSafeInteger(sequence) && sequence >= 0 ? sequence : null;
}

/**
 * The resource an event is about and its version, for stale-event discard (SPEC section 6):
 * `data.object.id`, and the `sequence` when the event has one, else `data.object.updatedAt`.
 * The payload is trusted only because its signature verified; its shape is still checked, and
 * an event without a usable version is processed as a notification (nothing to compare).
 */
export function versionOfEvent(entry: InboxEntry): { resource: string; version: number } | undefined {
  const object = record(record(record(entry.payload)?.data)?.object);
  const resource = object?.id;
  if (typeof resource !== 'string' || resource.length === 0 || resource.length > 255) return undefined;
  const sequence = sequenceOf(entry.payload);
  if (sequence !== null) return { resource, version: sequence };
  const updated = typeof object?.updatedAt === 'string' ? Date.parse(object.updatedAt) : Number.NaN;
  return Number.isSafeInteger(updated) && updated >= 0 ? { resource, version: updated } : undefined;
}

/** The server's inbox: ids shaped as the API shows them (`inb_...`). */
export function serverInbox(sql: postgres.Sql): PostgresInbox {
  return postgresInbox(sql, { newId: () => opaqueId('inb') });
}

/**
 * Works through up to `batch` due inbound events once (see `postgresInbox().process`); returns
 * how many were handled.
 *
 * @example
 * ```ts
 * while ((await processInbox(sql)) > 0);
 * ```
 */
export function processInbox(
  sql: postgres.Sql,
  batch = 50,
  log: (message: string) => void = (message) => console.error(message),
): Promise<number> {
  return serverInbox(sql).process({
    types: (type) => KNOWN_TYPE.test(type),
    versions: versionOfEvent,
    batch,
    maxAttempts: INBOX_MAX_ATTEMPTS,
    log,
  });
}
