import type postgres from 'postgres';

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
export function toConcurrency(row: postgres.Row): EndpointConcurrency {
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
export function toEndpoint(row: postgres.Row): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    description: row.description ?? null,
    eventTypes: row.event_types ?? [],
    status: row.status,
    maxPerSecond: row.max_per_second ?? null,
    signatureScheme: row.signature_scheme === 'v1a' ? 'v1a' : 'v1',
    publicKey: row.public_key ?? null,
    filter: toFilter(row.filter),
    concurrency: toConcurrency(row),
    ordering: row.ordering === 'per-resource' ? 'per-resource' : 'none',
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
