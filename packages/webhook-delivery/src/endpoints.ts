import type { Db } from '@holdfast/db';
import { opaqueId } from '@holdfast/ids';
import { problem } from '@holdfast/problem-details';
import { generateKeyPair, generateSecret } from '@holdfast/webhook-signer';
import { assertFilter, type EventFilter, filterJson } from './filter';
import type { DeliveryOptions, EndpointOptions } from './options';
import { pgArray } from './pg-array';
import { deliveryProblems } from './problems';
import {
  type DeliveryOrdering,
  type EndpointConcurrency,
  type Row,
  rowOf,
  type SignatureScheme,
  toConcurrency,
  toEndpoint,
  type WebhookEndpoint,
} from './rows';
import { storeStatements } from './sql/store';
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
const INITIAL_CONCURRENCY = 4;

/** How long the previous secret keeps signing after a rotation (24 h: both sign meanwhile). */
const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

const clock = (options: DeliveryOptions): number => (options.now ?? Date.now)();

/**
 * Registers an endpoint after the SSRF check and returns it with its new secret, which is
 * shown this once. Its pacing row is created with it: the adaptive in-flight limit starts at
 * `concurrencyInitial` (4 by default, never above `concurrencyMax`, the workers'
 * `perEndpointConcurrency`) and earns the rest by fast successes, so a new endpoint cannot take
 * many places before its receiver has shown it answers.
 *
 * @throws the 422 problem `destination_url_forbidden` for a URL the SSRF rules refuse; a 400
 * `validation_failed` problem for a bad `maxPerSecond`, `filter` or `ordering`.
 * @example
 * ```ts
 * const { endpoint, secret } = await createEndpoint(fromPg(pool), { account: 'acct_1', url: 'https://example.com/hooks' });
 * ```
 */
export async function createEndpoint(
  db: Db,
  input: EndpointInput,
  options: EndpointOptions = {},
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
  const now = new Date(clock(options)).toISOString();
  const [row] = await db.query<Row>(storeStatements(options.schema).createEndpoint, [
    opaqueId('we'),
    input.account,
    url,
    input.description ?? null,
    pgArray(input.eventTypes ?? []),
    secret,
    input.maxPerSecond ?? null,
    scheme,
    publicKey,
    filterText(input.filter),
    input.ordering ?? 'none',
    now,
    options.concurrencyMax ?? null,
    initial,
  ]);
  if (!row) throw new Error('insert returned no row');
  return { endpoint: toEndpoint(row), secret };
}

/**
 * The endpoint, or `undefined` when absent, deleted or another account's.
 *
 * @example
 * ```ts
 * const endpoint = await getEndpoint(db, { account: 'acct_1', id: 'we_...' });
 * ```
 */
export async function getEndpoint(
  db: Db,
  { account, id }: AccountRef,
  options: DeliveryOptions = {},
): Promise<WebhookEndpoint | undefined> {
  return rowOf(db, storeStatements(options.schema).getEndpoint, { account, id }, toEndpoint);
}

/**
 * Each endpoint's adaptive in-flight limit and ceiling, as the workers share them now: for a
 * page of endpoints listed without their pacing, and for metrics.
 *
 * @example
 * ```ts
 * const limits = await endpointConcurrency(db, ['we_1', 'we_2']);
 * limits.get('we_1'); // { current: 3, max: 32 }
 * ```
 */
export async function endpointConcurrency(
  db: Db,
  ids: readonly string[],
  options: DeliveryOptions = {},
): Promise<Map<string, EndpointConcurrency>> {
  const rows = await db.query<Row>(storeStatements(options.schema).endpointConcurrency, [pgArray(ids)]);
  return new Map(rows.map((row) => [String(row.endpoint_id), toConcurrency(row)]));
}

/**
 * Changes an endpoint. A new URL is checked like a new endpoint's; re-enabling clears the
 * failure streak so the disabling clock starts again, and its deliveries that fell due while it
 * was disabled are sent (they stayed due). `undefined` when absent, deleted or another account's.
 *
 * @throws as {@link createEndpoint} does, for the fields given.
 * @example
 * ```ts
 * await updateEndpoint(db, { account: 'acct_1', id: 'we_...', status: 'active', maxPerSecond: 50, ordering: 'per-resource' });
 * await updateEndpoint(db, { account: 'acct_1', id: 'we_...', filter: { 'data.object.total': { $gte: 10000 } } });
 * ```
 */
export async function updateEndpoint(
  db: Db,
  changes: EndpointChanges,
  options: EndpointOptions = {},
): Promise<WebhookEndpoint | undefined> {
  const url = changes.url === undefined ? null : await assertDestination(changes.url, options);
  assertRate(changes.maxPerSecond);
  assertFilter(changes.filter);
  assertOrdering(changes.ordering);
  const [row] = await db.query<Row>(storeStatements(options.schema).updateEndpoint, [
    changes.id,
    changes.account,
    url,
    changes.eventTypes === undefined ? null : pgArray(changes.eventTypes),
    changes.description !== undefined,
    changes.description ?? null,
    changes.status ?? null,
    changes.maxPerSecond !== undefined,
    changes.maxPerSecond ?? null,
    changes.filter !== undefined,
    filterText(changes.filter),
    changes.ordering ?? null,
    new Date(clock(options)).toISOString(),
  ]);
  return row ? toEndpoint(row) : undefined;
}

/**
 * Deletes an endpoint: no further deliveries; its history stays readable. `false` when absent.
 *
 * @example
 * ```ts
 * await deleteEndpoint(db, { account: 'acct_1', id: 'we_...' });
 * ```
 */
export async function deleteEndpoint(
  db: Db,
  { account, id }: AccountRef,
  options: DeliveryOptions = {},
): Promise<boolean> {
  const at = new Date(clock(options)).toISOString();
  const rows = await db.query(storeStatements(options.schema).deleteEndpoint, [id, account, at]);
  return rows.length > 0;
}

/**
 * Rotates the endpoint's secret (or `v1a` key pair: the new public key is in the endpoint).
 * The old one keeps signing beside the new for 24 h (two `v1,` or `v1a,` entries), so the
 * receiver can switch without a coordinated cutover. The new secret is returned this once;
 * `undefined` when absent, deleted or another account's.
 *
 * @example
 * ```ts
 * const rotated = await rotateSecret(db, { account: 'acct_1', id: 'we_...' });
 * ```
 */
export async function rotateSecret(
  db: Db,
  { account, id }: AccountRef,
  options: DeliveryOptions = {},
): Promise<{ endpoint: WebhookEndpoint; secret: string } | undefined> {
  const now = clock(options);
  // A key of each scheme; the statement keeps the one of the endpoint's scheme, in one step.
  const v1 = newKey('v1');
  const v1a = newKey('v1a');
  const [row] = await db.query<Row>(storeStatements(options.schema).rotateSecret, [
    id,
    account,
    new Date(now + ROTATION_OVERLAP_MS).toISOString(),
    v1a.secret,
    v1a.publicKey,
    v1.secret,
    new Date(now).toISOString(),
  ]);
  return row ? { endpoint: toEndpoint(row), secret: String(row.secret) } : undefined;
}
