import type { Db } from '@holdfast/db';
import { opaqueId } from '@holdfast/request-guards';
import { type PostgresInbox, postgresInbox } from '@holdfast/webhook-verifier/postgres';
import { eventVersion } from '@holdfast/webhook-verifier/receiver';
import type { Database } from './context';

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

/** The server's inbox: ids shaped as the API shows them (`inb_...`). */
export function serverInbox(db: Db): PostgresInbox {
  return postgresInbox(db, { newId: () => opaqueId('inb') });
}

/**
 * Works through up to `batch` due inbound events once (see `postgresInbox().process`); returns
 * how many were handled.
 *
 * @example
 * ```ts
 * while ((await processInbox(deps)) > 0);
 * ```
 */
export function processInbox(
  database: Database,
  batch = 50,
  log: (message: string) => void = (message) => console.error(message),
): Promise<number> {
  return serverInbox(database.db).process(database.transaction, {
    types: (type) => KNOWN_TYPE.test(type),
    versions: (entry) => eventVersion(entry.payload),
    batch,
    maxAttempts: INBOX_MAX_ATTEMPTS,
    log,
  });
}
