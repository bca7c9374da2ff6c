import type { Db } from '@holdfast/db';
import { qualify } from '@holdfast/db/migrate';

// Statements a service needs about its tenants' endpoints and deliveries beside the package's own
// writes: each once, as text with $n values, for any driver.

/** Options of the functions below: where the package's tables are. */
export interface TenantQueryOptions {
  /** The schema the package's tables were migrated into; absent: the connection's `search_path`. */
  readonly schema?: string;
}

function statements(schema: string | undefined) {
  const t = qualify(schema);
  return {
    endpointTenants: `select distinct account_id from ${t('holdfast_webhook_endpoints')} order by account_id`,
    holdsData: `select exists (select 1 from ${t('holdfast_webhook_endpoints')})
      or exists (select 1 from ${t('holdfast_events')}) as found`,
    // The key names the table, so tenants of two deployments in two schemas never wait on each other.
    lockTenant: `select pg_advisory_xact_lock(hashtextextended('${t('holdfast_webhook_endpoints').replaceAll("'", "''")}:' || $1::text, 0))`,
    countLive: `select count(*)::int as n from ${t('holdfast_webhook_endpoints')}
      where account_id = $1::text and deleted_at is null`,
    endpointScope: (
      lock: 'update' | 'share',
    ) => `select event_types, status from ${t('holdfast_webhook_endpoints')}
      where id = $1::text and account_id = $2::text and deleted_at is null
      for ${lock}`,
    queuedTypes: `select distinct event_type from ${t('holdfast_deliveries')}
      where endpoint_id = $1::text and status in ('pending', 'failed')
      order by event_type`,
  };
}

/** Every tenant (`account_id`) that has ever registered a webhook endpoint, deleted ones included. */
export async function endpointTenants(db: Db, options: TenantQueryOptions = {}): Promise<string[]> {
  const rows = await db.query<{ account_id: string }>(statements(options.schema).endpointTenants);
  return rows.map((row) => row.account_id);
}

/** Whether any endpoint or event was ever written: a seed step runs only on an empty database. */
export async function holdsDeliveryData(db: Db, options: TenantQueryOptions = {}): Promise<boolean> {
  const [row] = await db.query<{ found: boolean }>(statements(options.schema).holdsData);
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
export async function lockedEndpointCount(
  db: Db,
  account: string,
  options: TenantQueryOptions = {},
): Promise<number> {
  const sql = statements(options.schema);
  await db.query(sql.lockTenant, [account]);
  const [row] = await db.query<{ n: number }>(sql.countLive, [account]);
  return row?.n ?? 0;
}

/** What an endpoint carries, as {@link endpointScope} reads it. */
export interface EndpointScope {
  /** The event types it subscribes to; empty means every type. */
  readonly eventTypes: string[];
  /** `active`, or `disabled` (by its owner or after repeated failures). */
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
  options: TenantQueryOptions = {},
): Promise<EndpointScope | undefined> {
  const text = statements(options.schema).endpointScope(lock);
  const [row] = await db.query<{ event_types: string[]; status: string }>(text, [ref.id, ref.account]);
  return row ? { eventTypes: row.event_types, status: row.status } : undefined;
}

/** The distinct event types of an endpoint's deliveries still to be sent (pending or failed). */
export async function queuedEventTypes(
  db: Db,
  endpointId: string,
  options: TenantQueryOptions = {},
): Promise<string[]> {
  const rows = await db.query<{ event_type: string }>(statements(options.schema).queuedTypes, [endpointId]);
  return rows.map((row) => row.event_type);
}
