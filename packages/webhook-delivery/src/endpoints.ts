import { problem } from '@holdfast/problem-details';
import { generateKeyPair, generateSecret } from '@holdfast/webhook-signer';
import type { ISql as Sql } from 'postgres';
import { assertFilter, type EventFilter, filterJson } from './filter';
import { opaqueId } from './id';
import { pgArray } from './pg-array';
import { deliveryProblems } from './problems';
import {
  type DeliveryOrdering,
  type EndpointConcurrency,
  type SignatureScheme,
  toConcurrency,
  toEndpoint,
  type WebhookEndpoint,
} from './rows';
import { checkDestination, type DestinationOptions } from './ssrf';

export interface EndpointInput {
  account: string;
  url: string;
  eventTypes?: readonly string[] | undefined;
  description?: string | null | undefined;
  /** Attempts started per second at most, across every worker (integer >= 1); absent or null: no limit. */
  maxPerSecond?: number | null | undefined;
  /** `v1` (default): a `whsec_` secret; `v1a`: an ed25519 key pair, the public key shown. */
  signatureScheme?: SignatureScheme | undefined;
  /** A payload filter (the README, "Filters"): only events it matches get a delivery; absent or null: every event. */
  filter?: EventFilter | null | undefined;
  /** `per-resource`: one delivery per resource at a time, in event order; `none` (default): no order. */
  ordering?: DeliveryOrdering | undefined;
}

/** A new signing key for `scheme`: a `whsec_` secret, or a `whsk_` key and its `whpk_` public key. */
function newKey(scheme: SignatureScheme): { secret: string; publicKey: string | null } {
  if (scheme === 'v1') return { secret: generateSecret(), publicKey: null };
  const { secretKey, publicKey } = generateKeyPair();
  return { secret: secretKey, publicKey };
}

/** Names one row of an account: another account's rows are invisible. */
export interface AccountRef {
  account: string;
  id: string;
}

export interface EndpointChanges extends AccountRef {
  url?: string | undefined;
  eventTypes?: readonly string[] | undefined;
  description?: string | null | undefined;
  status?: 'active' | 'disabled' | undefined;
  /** A new rate ceiling, or `null` to lift it. */
  maxPerSecond?: number | null | undefined;
  /** A new payload filter, or `null` to remove it. */
  filter?: EventFilter | null | undefined;
  /**
   * A new ordering. It applies to deliveries created from then on; those already queued keep
   * the rule they were created under.
   */
  ordering?: DeliveryOrdering | undefined;
}

/** A filter as the `filter` column takes it: JSON text, or null for none. */
const filterText = (filter: EventFilter | null | undefined): string | null =>
  filter === undefined || filter === null ? null : filterJson(filter);

/**
 * The destination in WHATWG-normalised form (https://url.spec.whatwg.org/; stored and echoed so), after
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

function assertRate(value: number | null | undefined): void {
  if (value === undefined || value === null) return;
  if (!Number.isInteger(value) || value < 1) {
    throw problem('validation_failed', {
      detail: 'maxPerSecond must be an integer of at least 1.',
      errors: [{ field: 'maxPerSecond', code: 'invalid', pointer: '#/maxPerSecond', detail: 'integer >= 1' }],
    });
  }
}

function assertOrdering(value: unknown): void {
  if (value === undefined || value === 'none' || value === 'per-resource') return;
  throw problem('validation_failed', {
    detail: 'ordering must be "none" or "per-resource".',
    errors: [
      { field: 'ordering', code: 'invalid', pointer: '#/ordering', detail: '"none" or "per-resource"' },
    ],
  });
}

/** Where a new endpoint's adaptive in-flight limit starts unless `concurrencyInitial` says otherwise. */
export const INITIAL_CONCURRENCY = 4;

/**
 * Registers an endpoint after the SSRF check and returns it with its new secret, which is
 * shown this once. Its pacing row is created with it: the adaptive in-flight limit starts at
 * `concurrencyInitial` (4 by default, never above `concurrencyMax`, the workers'
 * `perEndpointConcurrency`) and earns the rest by fast successes, so a new endpoint cannot take
 * many places before its receiver has shown it answers.
 *
 * @example
 * ```ts
 * const { endpoint, secret } = await createEndpoint(sql, { account: 'acct_1', url: 'https://example.com/hooks' });
 * ```
 */
export async function createEndpoint(
  sql: Sql,
  input: EndpointInput,
  options: DestinationOptions & {
    now?: () => number;
    concurrencyMax?: number;
    concurrencyInitial?: number;
  } = {},
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const initial = options.concurrencyInitial ?? INITIAL_CONCURRENCY;
  if (!Number.isInteger(initial) || initial < 1)
    throw new RangeError('concurrencyInitial must be an integer of at least 1');
  const url = await assertDestination(input.url, options);
  assertRate(input.maxPerSecond);
  assertFilter(input.filter);
  assertOrdering(input.ordering);
  const scheme = input.signatureScheme ?? 'v1';
  const { secret, publicKey } = newKey(scheme);
  const now = new Date((options.now ?? Date.now)());
  const [row] = await sql`
    with e as (
      insert into holdfast_webhook_endpoints
        (id, account_id, url, description, event_types, secret, max_per_second,
         signature_scheme, public_key, filter, ordering, created_at, updated_at)
      values (${opaqueId('we')}, ${input.account}, ${url}, ${input.description ?? null},
              ${pgArray(input.eventTypes ?? [])}::text[], ${secret}, ${input.maxPerSecond ?? null},
              ${scheme}, ${publicKey}, ${filterText(input.filter)}::text::jsonb, ${input.ordering ?? 'none'}, ${now}, ${now})
      returning *
    ),
    p as (
      insert into holdfast_endpoint_pacing (endpoint_id, concurrency_max, concurrency_limit)
      select id, ${options.concurrencyMax ?? null}::int,
             least(${initial}::int, coalesce(${options.concurrencyMax ?? null}::int, ${initial}::int)) from e
      returning concurrency_limit, concurrency_max
    )
    select e.*, p.concurrency_limit, p.concurrency_max from e, p`;
  if (!row) throw new Error('insert returned no row');
  return { endpoint: toEndpoint(row), secret };
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
    select e.*, p.concurrency_limit, p.concurrency_max
    from holdfast_webhook_endpoints e left join holdfast_endpoint_pacing p on p.endpoint_id = e.id
    where e.id = ${id} and e.account_id = ${account} and e.deleted_at is null`;
  return row ? toEndpoint(row) : undefined;
}

/**
 * Each endpoint's adaptive in-flight limit and ceiling, as the workers share them now: for a
 * page of endpoints listed from `holdfast_webhook_endpoints` alone, and for metrics.
 *
 * @example
 * ```ts
 * const limits = await endpointConcurrency(sql, ['we_1', 'we_2']);
 * limits.get('we_1'); // { current: 3, max: 32 }
 * ```
 */
export async function endpointConcurrency(
  sql: Sql,
  ids: readonly string[],
): Promise<Map<string, EndpointConcurrency>> {
  const rows = await sql`
    select endpoint_id, concurrency_limit, concurrency_max from holdfast_endpoint_pacing
    where endpoint_id = any(${pgArray(ids)}::text[])`;
  return new Map(rows.map((row) => [String(row.endpoint_id), toConcurrency(row)]));
}

/**
 * Changes an endpoint. A new URL is checked like a new endpoint's; re-enabling clears the
 * failure streak so the disabling clock starts again, and its deliveries that fell due while it
 * was disabled are sent (they stayed due).
 *
 * @example
 * ```ts
 * await updateEndpoint(sql, { account: 'acct_1', id: 'we_...', status: 'active', maxPerSecond: 50, ordering: 'per-resource' });
 * await updateEndpoint(sql, { account: 'acct_1', id: 'we_...', filter: { 'data.object.total': { $gte: 10000 } } });
 * ```
 */
export async function updateEndpoint(
  sql: Sql,
  changes: EndpointChanges,
  options: DestinationOptions & { now?: () => number } = {},
): Promise<WebhookEndpoint | undefined> {
  const url = changes.url === undefined ? null : await assertDestination(changes.url, options);
  assertRate(changes.maxPerSecond);
  assertFilter(changes.filter);
  assertOrdering(changes.ordering);
  const now = new Date((options.now ?? Date.now)());
  const [row] = await sql`
    with u as (
      update holdfast_webhook_endpoints set
        url = coalesce(${url}, url),
        event_types = case when ${changes.eventTypes === undefined} then event_types else ${pgArray(changes.eventTypes ?? [])}::text[] end,
        description = case when ${changes.description === undefined} then description else ${changes.description ?? null} end,
        status = coalesce(${changes.status ?? null}, status),
        max_per_second = case when ${changes.maxPerSecond === undefined} then max_per_second else ${changes.maxPerSecond ?? null}::int end,
        filter = case when ${changes.filter === undefined} then filter else ${filterText(changes.filter)}::text::jsonb end,
        ordering = coalesce(${changes.ordering ?? null}, ordering),
        failing_since = case when ${changes.status === 'active'} then null else failing_since end,
        disable_warned_at = case when ${changes.status === 'active'} then null else disable_warned_at end,
        disabled_reason = case when ${changes.status !== undefined} then null else disabled_reason end,
        updated_at = ${now}
      where id = ${changes.id} and account_id = ${changes.account} and deleted_at is null
      returning *
    )
    select u.*, p.concurrency_limit, p.concurrency_max
    from u left join holdfast_endpoint_pacing p on p.endpoint_id = u.id`;
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
  { now: clock = Date.now }: { now?: () => number } = {},
): Promise<boolean> {
  const now = clock();
  const rows = await sql`
    update holdfast_webhook_endpoints set deleted_at = ${new Date(now)}, status = 'disabled', updated_at = ${new Date(now)}
    where id = ${id} and account_id = ${account} and deleted_at is null
    returning id`;
  return rows.length > 0;
}

/** How long the previous secret keeps signing after a rotation (24 h: both sign meanwhile). */
export const ROTATION_OVERLAP_MS: number = 24 * 60 * 60 * 1000;

/**
 * Rotates the endpoint's secret (or `v1a` key pair: the new public key is in the endpoint).
 * The old one keeps signing beside the new for 24 h (two `v1,` or `v1a,` entries), so the receiver can switch without a coordinated cutover. The new secret is
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
  { now: clock = Date.now }: { now?: () => number } = {},
): Promise<{ endpoint: WebhookEndpoint; secret: string } | undefined> {
  const now = clock();
  // A key of each scheme; the statement keeps the one of the endpoint's scheme, in one step.
  const v1 = newKey('v1');
  const v1a = newKey('v1a');
  const [row] = await sql`
    with u as (
      update holdfast_webhook_endpoints set
        previous_secret = secret,
        previous_secret_expires_at = ${new Date(now + ROTATION_OVERLAP_MS)},
        secret = case when signature_scheme = 'v1a' then ${v1a.secret} else ${v1.secret} end,
        public_key = case when signature_scheme = 'v1a' then ${v1a.publicKey} end,
        updated_at = ${new Date(now)}
      where id = ${id} and account_id = ${account} and deleted_at is null
      returning *
    )
    select u.*, p.concurrency_limit, p.concurrency_max
    from u left join holdfast_endpoint_pacing p on p.endpoint_id = u.id`;
  return row ? { endpoint: toEndpoint(row), secret: String(row.secret) } : undefined;
}
