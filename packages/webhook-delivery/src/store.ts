import { opaqueId } from '@holdfast/opaque-id';
import { generateSecret } from '@holdfast/webhook-signer';
import type postgres from 'postgres';
import { deliveryProblems } from './problems';
import { checkDestination, type DestinationOptions } from './ssrf';

/** Any postgres.js client: a pool, a reserved connection or a transaction. */
export type Sql = postgres.Sql | postgres.TransactionSql;

/** A webhook endpoint as the API shows it (never its secret). */
export interface WebhookEndpoint {
  id: string;
  url: string;
  description: string | null;
  eventTypes: string[];
  status: 'active' | 'disabled';
  createdAt: string;
  updatedAt: string;
}

/** An event: the exact payload of its deliveries. */
export interface WebhookEvent {
  id: string;
  type: string;
  createdAt: string;
  sequence: number;
  data: { object: Record<string, unknown> };
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'dead';

export interface Delivery {
  id: string;
  event: string;
  eventType: string;
  endpoint: string;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface DeliveryAttempt {
  id: string;
  delivery: string;
  status: number | null;
  error: string | null;
  latencyMs: number;
  responseBodyPrefix: string | null;
  createdAt: string;
}

export interface Notification {
  id: string;
  type: string;
  message: string;
  endpoint: string | null;
  disableAt: string | null;
  createdAt: string;
}

const iso = (value: unknown): string =>
  (value instanceof Date ? value : new Date(String(value))).toISOString();
const isoOrNull = (value: unknown): string | null =>
  value === null || value === undefined ? null : iso(value);

/** Row → API shape of `holdfast_webhook_endpoints`. */
export function toEndpoint(row: postgres.Row): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    description: row.description ?? null,
    eventTypes: row.event_types ?? [],
    status: row.status,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/** Row → API shape of `holdfast_events` (the stored payload, parsed). */
export function toEvent(row: postgres.Row): WebhookEvent {
  return JSON.parse(row.payload);
}

/** Row → API shape of `holdfast_deliveries`. */
export function toDelivery(row: postgres.Row): Delivery {
  return {
    id: row.id,
    event: row.event_id,
    eventType: row.event_type,
    endpoint: row.endpoint_id,
    status: row.status,
    attemptCount: Number(row.attempt_count),
    nextAttemptAt:
      row.status === 'pending' || row.status === 'failed' ? isoOrNull(row.next_attempt_at) : null,
    lastAttemptAt: isoOrNull(row.last_attempt_at),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/** Row → API shape of `holdfast_delivery_attempts`. */
export function toAttempt(row: postgres.Row): DeliveryAttempt {
  return {
    id: row.id,
    delivery: row.delivery_id,
    status: row.status ?? null,
    error: row.error ?? null,
    latencyMs: Number(row.latency_ms),
    responseBodyPrefix: row.response_body_prefix ?? null,
    createdAt: iso(row.created_at),
  };
}

/** Row → API shape of `holdfast_notifications`. */
export function toNotification(row: postgres.Row): Notification {
  return {
    id: row.id,
    type: row.type,
    message: row.message,
    endpoint: row.endpoint_id ?? null,
    disableAt: isoOrNull(row.disable_at),
    createdAt: iso(row.created_at),
  };
}

export interface EndpointInput {
  account: string;
  url: string;
  eventTypes?: readonly string[] | undefined;
  description?: string | null | undefined;
}

/**
 * The destination in WHATWG-normalised form (CONTRACT section 10: stored and echoed so), after
 * the SSRF check: `" HTTPS://Example.COM:443/a/../b"` is stored as `https://example.com/b`.
 */
async function assertDestination(url: string, options: DestinationOptions): Promise<string> {
  const check = await checkDestination(url, options);
  if (!check.ok) {
    throw deliveryProblems.create('destination_url_forbidden', {
      detail: `The destination URL is not allowed: ${check.reason}.`,
      errors: [{ field: 'url', code: 'destination_url_forbidden', pointer: '#/url', detail: check.reason }],
    });
  }
  return check.url.href;
}

/**
 * Registers an endpoint after the SSRF check and returns it with its new secret, which is
 * shown this once (SPEC section 5).
 *
 * @example
 * ```ts
 * const { endpoint, secret } = await createEndpoint(sql, { account: 'acct_1', url: 'https://example.com/hooks' });
 * ```
 */
export async function createEndpoint(
  sql: Sql,
  input: EndpointInput,
  options: DestinationOptions & { now?: number } = {},
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const url = await assertDestination(input.url, options);
  const secret = generateSecret();
  const now = new Date(options.now ?? Date.now());
  const [row] = await sql`
    insert into holdfast_webhook_endpoints
      (id, account_id, url, description, event_types, secret, created_at, updated_at)
    values (${opaqueId('we')}, ${input.account}, ${url}, ${input.description ?? null},
            ${sql.array([...(input.eventTypes ?? [])])}, ${secret}, ${now}, ${now})
    returning *`;
  if (!row) throw new Error('insert returned no row');
  return { endpoint: toEndpoint(row), secret };
}

/** Names one row of an account: another account's rows are invisible. */
export interface AccountRef {
  account: string;
  id: string;
}

/**
 * The endpoint, or `undefined` when absent, deleted or another account's.
 *
 * @example
 * ```ts
 * const endpoint = await getEndpoint(sql, { account: 'acct_1', id: 'we_...' });
 * ```
 */
export async function getEndpoint(
  sql: Sql,
  { account, id }: AccountRef,
): Promise<WebhookEndpoint | undefined> {
  const [row] = await sql`
    select * from holdfast_webhook_endpoints
    where id = ${id} and account_id = ${account} and deleted_at is null`;
  return row ? toEndpoint(row) : undefined;
}

export interface EndpointChanges extends AccountRef {
  url?: string | undefined;
  eventTypes?: readonly string[] | undefined;
  description?: string | null | undefined;
  status?: 'active' | 'disabled' | undefined;
}

/**
 * Changes an endpoint. A new URL is checked like a new endpoint's; re-enabling clears the
 * failure streak so the disabling clock starts again.
 *
 * @example
 * ```ts
 * await updateEndpoint(sql, { account: 'acct_1', id: 'we_...', status: 'active' });
 * ```
 */
export async function updateEndpoint(
  sql: Sql,
  changes: EndpointChanges,
  options: DestinationOptions & { now?: number } = {},
): Promise<WebhookEndpoint | undefined> {
  const url = changes.url === undefined ? null : await assertDestination(changes.url, options);
  const now = new Date(options.now ?? Date.now());
  const [row] = await sql`
    update holdfast_webhook_endpoints set
      url = coalesce(${url}, url),
      event_types = case when ${changes.eventTypes === undefined} then event_types else ${sql.array([...(changes.eventTypes ?? [])])}::text[] end,
      description = case when ${changes.description === undefined} then description else ${changes.description ?? null} end,
      status = coalesce(${changes.status ?? null}, status),
      failing_since = case when ${changes.status === 'active'} then null else failing_since end,
      disable_warned_at = case when ${changes.status === 'active'} then null else disable_warned_at end,
      disabled_reason = case when ${changes.status !== undefined} then null else disabled_reason end,
      updated_at = ${now}
    where id = ${changes.id} and account_id = ${changes.account} and deleted_at is null
    returning *`;
  return row ? toEndpoint(row) : undefined;
}

/**
 * Deletes an endpoint: no further deliveries; its history stays readable. `false` when absent.
 *
 * @example
 * ```ts
 * await deleteEndpoint(sql, { account: 'acct_1', id: 'we_...' });
 * ```
 */
export async function deleteEndpoint(
  sql: Sql,
  { account, id }: AccountRef,
  { now = Date.now() }: { now?: number } = {},
): Promise<boolean> {
  const rows = await sql`
    update holdfast_webhook_endpoints set deleted_at = ${new Date(now)}, status = 'disabled', updated_at = ${new Date(now)}
    where id = ${id} and account_id = ${account} and deleted_at is null
    returning id`;
  return rows.length > 0;
}

/** How long the previous secret keeps signing after a rotation (CONTRACT section 5). */
export const ROTATION_OVERLAP_MS: number = 24 * 60 * 60 * 1000;

/**
 * Rotates the endpoint's secret. The old one keeps signing beside the new for 24 h (two `v1,`
 * entries), so the receiver can switch without a coordinated cutover. The new secret is
 * returned this once.
 *
 * @example
 * ```ts
 * const rotated = await rotateSecret(sql, { account: 'acct_1', id: 'we_...' });
 * ```
 */
export async function rotateSecret(
  sql: Sql,
  { account, id }: AccountRef,
  { now = Date.now() }: { now?: number } = {},
): Promise<{ endpoint: WebhookEndpoint; secret: string } | undefined> {
  const secret = generateSecret();
  const [row] = await sql`
    update holdfast_webhook_endpoints set
      previous_secret = secret,
      previous_secret_expires_at = ${new Date(now + ROTATION_OVERLAP_MS)},
      secret = ${secret},
      updated_at = ${new Date(now)}
    where id = ${id} and account_id = ${account} and deleted_at is null
    returning *`;
  return row ? { endpoint: toEndpoint(row), secret } : undefined;
}

export interface EventInput {
  account: string;
  /** `subscription.created`, `order.refunded`, ... */
  type: string;
  /** The resource's id: `sequence` rises monotonically per resource. */
  resourceId: string;
  /** The resource after the change; it should carry `updatedAt`. */
  object: Record<string, unknown>;
  now?: number;
}

/**
 * The transactional outbox: records the event and one delivery for each of the account's
 * active endpoints subscribed to its type, inside the caller's business transaction, so an
 * event exists exactly when the change it describes committed.
 *
 * @example
 * ```ts
 * await sql.begin(async (tx) => {
 *   const [sub] = await tx`insert into subscriptions ... returning *`;
 *   await enqueueEvent(tx, { account, type: 'subscription.created', resourceId: sub.id, object: toSubscription(sub) });
 * });
 * ```
 */
export async function enqueueEvent(tx: Sql, input: EventInput): Promise<WebhookEvent> {
  const now = new Date(input.now ?? Date.now());
  const [seq] = await tx<{ sequence: string }[]>`
    insert into holdfast_resource_sequences (resource_id, sequence) values (${input.resourceId}, 1)
    on conflict (resource_id) do update set sequence = holdfast_resource_sequences.sequence + 1
    returning sequence`;
  const event: WebhookEvent = {
    id: opaqueId('evt'),
    type: input.type,
    createdAt: now.toISOString(),
    sequence: Number(seq?.sequence ?? 1),
    data: { object: input.object },
  };
  await tx`
    insert into holdfast_events (id, account_id, type, resource_id, sequence, payload, created_at)
    values (${event.id}, ${input.account}, ${event.type}, ${input.resourceId}, ${event.sequence}, ${JSON.stringify(event)}, ${now})`;
  await tx`
    insert into holdfast_deliveries
      (id, account_id, event_id, endpoint_id, event_type, status, next_attempt_at, created_at, updated_at)
    select 'dlv_' || replace(gen_random_uuid()::text, '-', ''), ${input.account}, ${event.id}, e.id, ${event.type},
           'pending', ${now}, ${now}, ${now}
    from holdfast_webhook_endpoints e
    where e.account_id = ${input.account} and e.status = 'active' and e.deleted_at is null
      and (cardinality(e.event_types) = 0 or ${event.type} = any(e.event_types) or '*' = any(e.event_types))`;
  return event;
}

/**
 * The event, or `undefined` when absent or another account's.
 *
 * @example
 * ```ts
 * const event = await getEvent(sql, { account: 'acct_1', id: 'evt_...' });
 * ```
 */
export async function getEvent(sql: Sql, { account, id }: AccountRef): Promise<WebhookEvent | undefined> {
  const [row] = await sql`select payload from holdfast_events where id = ${id} and account_id = ${account}`;
  return row ? toEvent(row) : undefined;
}

/**
 * The delivery, or `undefined` when absent or another account's.
 *
 * @example
 * ```ts
 * const delivery = await getDelivery(sql, { account: 'acct_1', id: 'dlv_...' });
 * ```
 */
export async function getDelivery(sql: Sql, { account, id }: AccountRef): Promise<Delivery | undefined> {
  const [row] = await sql`select * from holdfast_deliveries where id = ${id} and account_id = ${account}`;
  return row ? toDelivery(row) : undefined;
}

/**
 * Every attempt of a delivery, oldest first (a delivery has at most one attempt per schedule
 * step and replay, so the list is short); `undefined` when the delivery is absent or another
 * account's. For a paginated list, query `holdfast_delivery_attempts` and map rows with `toAttempt`.
 *
 * @example
 * ```ts
 * const attempts = await listAttempts(sql, { account: 'acct_1', deliveryId: 'dlv_...' });
 * ```
 */
export async function listAttempts(
  sql: Sql,
  { account, deliveryId }: { account: string; deliveryId: string },
): Promise<DeliveryAttempt[] | undefined> {
  const [delivery] = await sql`
    select id from holdfast_deliveries where id = ${deliveryId} and account_id = ${account}`;
  if (!delivery) return undefined;
  const rows = await sql`
    select * from holdfast_delivery_attempts
    where delivery_id = ${deliveryId} and account_id = ${account}
    order by created_at, id`;
  return rows.map(toAttempt);
}

/**
 * Replays a delivery (dead-letter replay, SPEC section 6): the same delivery and Webhook-Id,
 * back to `pending`, due now, with a fresh retry schedule; earlier attempts stay in the log.
 *
 * @example
 * ```ts
 * const delivery = await replayDelivery(sql, { account: 'acct_1', id: 'dlv_...' }); // answer 202 with it
 * ```
 */
export async function replayDelivery(
  sql: Sql,
  { account, id }: AccountRef,
  { now = Date.now() }: { now?: number } = {},
): Promise<Delivery | undefined> {
  const [row] = await sql`
    update holdfast_deliveries set
      status = 'pending', retry_base = attempt_count, next_attempt_at = ${new Date(now)},
      lease_owner = null, lease_expires_at = null, updated_at = ${new Date(now)}
    where id = ${id} and account_id = ${account}
    returning *`;
  return row ? toDelivery(row) : undefined;
}
