import type { Db } from '@holdfast/db';

/** A row as any driver returns it, column names as keys. */
export type Row = { readonly [column: string]: unknown };

/** The row `text` (`$1` id, `$2` account) finds, mapped; `undefined` when there is none. */
export async function rowOf<T>(
  db: Db,
  text: string,
  ref: { readonly account: string; readonly id: string },
  map: (row: Row) => T,
): Promise<T | undefined> {
  const [row] = await db.query<Row>(text, [ref.id, ref.account]);
  return row ? map(row) : undefined;
}

/** The in-flight limit the sender uses for an endpoint now, and its ceiling. */
export interface EndpointConcurrency {
  /** The adaptive limit: falls on timeouts, 429, 502-504 and connection errors, climbs back on fast successes. */
  current: number;
  /** The configured ceiling (the workers' `perEndpointConcurrency`). */
  max: number;
}

/** How an endpoint's deliveries are signed (Standard Webhooks `v1` or `v1a`). */
export type SignatureScheme = 'v1' | 'v1a';

/**
 * Whether an endpoint's deliveries of one resource go one at a time, in their events' order
 * (`per-resource`), or all at once (`none`, the default).
 */
export type DeliveryOrdering = 'none' | 'per-resource';

/** A webhook endpoint as the API shows it (never its secret). */
export interface WebhookEndpoint {
  id: string;
  url: string;
  description: string | null;
  eventTypes: string[];
  status: 'active' | 'disabled';
  /** Attempts started per second at most, across every worker; `null` for no limit. */
  maxPerSecond: number | null;
  /** `v1` (HMAC-SHA256 with a `whsec_` secret) or `v1a` (ed25519; receivers verify with `publicKey`). */
  signatureScheme: SignatureScheme;
  /** The `whpk_` public key of a `v1a` endpoint (after a rotation, the new one); `null` for `v1`. */
  publicKey: string | null;
  /** The payload filter: only events it matches get a delivery (the README, "Filters"); `null` for none. */
  filter: { [key: string]: unknown } | null;
  concurrency: EndpointConcurrency;
  /**
   * `per-resource`: deliveries with the same ordering key (the event's resource id) are attempted
   * one at a time, in the order their events were created; the next waits until the one before
   * it succeeded or went `dead`. `none`: no order between deliveries.
   */
  ordering: DeliveryOrdering;
  createdAt: string;
  updatedAt: string;
}

/** An event: the exact payload of its deliveries. */
export interface WebhookEvent {
  id: string;
  type: string;
  createdAt: string;
  sequence: number;
  /** `true` on a test event (`sendTestEvent`); absent on every other. */
  test?: true;
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

/** The workers' default `perEndpointConcurrency`, shown as the ceiling until a worker records its own. */
export const DEFAULT_PER_ENDPOINT_CONCURRENCY = 4;

const text = (value: unknown): string => String(value);
const textOrNull = (value: unknown): string | null =>
  value === null || value === undefined ? null : String(value);
const iso = (value: unknown): string =>
  (value instanceof Date ? value : new Date(String(value))).toISOString();
const isoOrNull = (value: unknown): string | null =>
  value === null || value === undefined ? null : iso(value);

/**
 * The concurrency of a row carrying `holdfast_endpoint_pacing`'s `concurrency_limit` and
 * `concurrency_max` (absent columns mean a fresh endpoint: the limit starts at the ceiling).
 *
 * @example
 * ```ts
 * toConcurrency({ concurrency_limit: 2.5, concurrency_max: 8 }); // { current: 2, max: 8 }
 * ```
 */
export function toConcurrency(row: Row): EndpointConcurrency {
  const max = Number(row.concurrency_max ?? DEFAULT_PER_ENDPOINT_CONCURRENCY);
  const limit =
    row.concurrency_limit === null || row.concurrency_limit === undefined
      ? max
      : Number(row.concurrency_limit);
  return { current: Math.max(1, Math.min(max, Math.floor(limit))), max };
}

// jsonb arrives parsed from postgres.js and as text from drivers that do not parse it.
const toFilter = (value: unknown): { [key: string]: unknown } | null => {
  const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : value;
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
    ? (parsed as { [key: string]: unknown })
    : null;
};

/** Row → API shape of `holdfast_webhook_endpoints` (joined with its pacing row when present). */
export function toEndpoint(row: Row): WebhookEndpoint {
  return {
    id: text(row.id),
    url: text(row.url),
    description: textOrNull(row.description),
    eventTypes: Array.isArray(row.event_types) ? row.event_types.map(String) : [],
    status: row.status === 'disabled' ? 'disabled' : 'active',
    maxPerSecond:
      row.max_per_second === null || row.max_per_second === undefined ? null : Number(row.max_per_second),
    signatureScheme: row.signature_scheme === 'v1a' ? 'v1a' : 'v1',
    publicKey: textOrNull(row.public_key),
    filter: toFilter(row.filter),
    concurrency: toConcurrency(row),
    ordering: row.ordering === 'per-resource' ? 'per-resource' : 'none',
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/** Row → API shape of `holdfast_events` (the stored payload, parsed). */
export function toEvent(row: Row): WebhookEvent {
  return JSON.parse(text(row.payload));
}

/** Row → API shape of `holdfast_deliveries`. */
export function toDelivery(row: Row): Delivery {
  return {
    id: text(row.id),
    event: text(row.event_id),
    eventType: text(row.event_type),
    endpoint: text(row.endpoint_id),
    status: text(row.status) as DeliveryStatus,
    attemptCount: Number(row.attempt_count),
    nextAttemptAt:
      row.status === 'pending' || row.status === 'failed' ? isoOrNull(row.next_attempt_at) : null,
    lastAttemptAt: isoOrNull(row.last_attempt_at),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/** Row → API shape of `holdfast_delivery_attempts`. */
export function toAttempt(row: Row): DeliveryAttempt {
  return {
    id: text(row.id),
    delivery: text(row.delivery_id),
    status: row.status === null || row.status === undefined ? null : Number(row.status),
    error: textOrNull(row.error),
    latencyMs: Number(row.latency_ms),
    responseBodyPrefix: textOrNull(row.response_body_prefix),
    createdAt: iso(row.created_at),
  };
}

/** Row → API shape of `holdfast_notifications`. */
export function toNotification(row: Row): Notification {
  return {
    id: text(row.id),
    type: text(row.type),
    message: text(row.message),
    endpoint: textOrNull(row.endpoint_id),
    disableAt: isoOrNull(row.disable_at),
    createdAt: iso(row.created_at),
  };
}
