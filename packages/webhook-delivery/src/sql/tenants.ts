import type { Db } from '@holdfast/db';

// Statements a service needs about its tenants' endpoints and deliveries beside the package's own
// writes: each once, as text with $n values, for any driver.

const ENDPOINT_TENANTS = 'select distinct account_id from holdfast_webhook_endpoints order by account_id';
const HAS_DATA = `select exists (select 1 from holdfast_webhook_endpoints)
  or exists (select 1 from holdfast_events) as found`;
const LOCK_TENANT = `select pg_advisory_xact_lock(hashtextextended('holdfast_webhook_endpoints:' || $1::text, 0))`;
const COUNT_LIVE = `select count(*)::int as n from holdfast_webhook_endpoints
  where account_id = $1::text and deleted_at is null`;
const ENDPOINT_SCOPE = (
  lock: 'update' | 'share',
) => `select event_types, status from holdfast_webhook_endpoints
  where id = $1::text and account_id = $2::text and deleted_at is null
  for ${lock}`;
const QUEUED_TYPES = `select distinct event_type from holdfast_deliveries
  where endpoint_id = $1::text and status in ('pending', 'failed')
  order by event_type`;

/** Every tenant (`account_id`) that has ever registered a webhook endpoint, deleted ones included. */
export async function endpointTenants(db: Db): Promise<string[]> {
  const rows = await db.query<{ account_id: string }>(ENDPOINT_TENANTS);
  return rows.map((row) => row.account_id);
}

/** Whether any endpoint or event was ever written: a seed step runs only on an empty database. */
export async function holdsDeliveryData(db: Db): Promise<boolean> {
  const [row] = await db.query<{ found: boolean }>(HAS_DATA);
  return row?.found === true;
}

/**
 * In a transaction: waits for the tenant's endpoint-creation lock (a transaction-scoped advisory
 * lock), then counts its endpoints that are not deleted. Creations that call this first run one
 * at a time per tenant, so a limit checked against the count holds under concurrency.
 *
 * @example
 * ```ts
 * await transaction(async (_, db) => {
 *   if ((await lockedEndpointCount(db, account)) >= 25) throw problem('endpoint_limit_reached');
 *   return createEndpoint(db, { account, url, eventTypes: [] });
 * });
 * ```
 */
export async function lockedEndpointCount(db: Db, account: string): Promise<number> {
  await db.query(LOCK_TENANT, [account]);
  const [row] = await db.query<{ n: number }>(COUNT_LIVE, [account]);
  return row?.n ?? 0;
}

/** What an endpoint carries, as {@link endpointScope} reads it. */
export interface EndpointScope {
  /** The event types it subscribes to; empty means every type. */
  readonly eventTypes: string[];
  readonly status: string;
}

/**
 * In a transaction: the event types and status of the tenant's endpoint `id` (not deleted), with
 * the row locked `for update` or `for share` until the transaction ends, so what was checked
 * against them cannot change before the caller's write; `undefined` when there is none.
 */
export async function endpointScope(
  db: Db,
  ref: { account: string; id: string },
  lock: 'update' | 'share',
): Promise<EndpointScope | undefined> {
  const [row] = await db.query<{ event_types: string[]; status: string }>(ENDPOINT_SCOPE(lock), [
    ref.id,
    ref.account,
  ]);
  return row ? { eventTypes: row.event_types, status: row.status } : undefined;
}

/** The distinct event types of an endpoint's deliveries still to be sent (pending or failed). */
export async function queuedEventTypes(db: Db, endpointId: string): Promise<string[]> {
  const rows = await db.query<{ event_type: string }>(QUEUED_TYPES, [endpointId]);
  return rows.map((row) => row.event_type);
}
