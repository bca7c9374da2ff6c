import type { Context, Env, MiddlewareHandler } from 'hono';
import type { DedupStore } from './dedup';
import { hmacSha256 } from './hmac';
import { createReceiver, type WebhookEvent } from './receive';
import { type Verifier, verifierFactory } from './verify';
import type { VersionStore } from './versions';

export type { WebhookEvent } from './receive';

const createVerifier = verifierFactory(hmacSha256);

export interface WebhookReceiverOptions<E extends Env = Env> {
  /** The secrets of the receiver this request is for; `undefined` answers 404 `not_found`. */
  secrets: (c: Context<E>) => readonly string[] | undefined;
  /** Hand-off to background processing; must be fast. Throwing answers 5xx (via `app.onError`). */
  onEvent: (event: WebhookEvent, c: Context<E>) => Promise<void> | void;
  /** Deduplication by `webhook-id`: duplicates are acknowledged without calling `onEvent`. */
  dedup?: DedupStore;
  /** Namespace of the dedup keys and versions. Default: the request path (one per receiver). */
  scope?: (c: Context<E>) => string;
  /** Seconds ids stay recorded. Default 7 days. */
  retentionSeconds?: number;
  /** Known event types; others are acknowledged with 200 and not handed off. */
  types?: readonly string[];
  /** Stale-event discard by `sequence` or `updatedAt` per resource. */
  versions?: {
    store: VersionStore;
    of: (event: WebhookEvent) => { resource: string; version: number | string | Date } | undefined;
  };
  /** Timestamp tolerance in seconds. Default 300. */
  toleranceSeconds?: number;
  /** Largest body accepted, in bytes. Default 1 MiB; larger answers 413. */
  maxBytes?: number;
  /** Base of problem `type` URIs. Default `https://holdfast.dev/problems/`. */
  typeBase?: string;
  /** The request id to put in problem documents (CONTRACT section 2), when the app has one. */
  requestId?: (c: Context<E>) => string | undefined;
  /** Current time in ms. Default `Date.now`. */
  now?: () => number;
}

const TITLES = {
  webhook_timestamp_out_of_window: 'Webhook timestamp out of window',
  webhook_signature_invalid: 'Webhook signature invalid',
  invalid_json: 'Invalid JSON',
  not_found: 'Not found',
  payload_too_large: 'Payload too large',
} as const;

/**
 * A Hono handler that receives Standard Webhooks (SPEC section 6): reads the raw body, verifies
 * it against the secrets `secrets(c)` gives, acknowledges duplicates, stale events and unknown
 * types with 200 and accepted events with 204 after `onEvent` hands them off. Failures are
 * `application/problem+json`: 400 `webhook_timestamp_out_of_window`, 401
 * `webhook_signature_invalid`, 400 `invalid_json`, 404 `not_found`, 413 `payload_too_large`.
 *
 * @example
 * ```ts
 * app.post('/hooks/:name', webhookReceiver({
 *   secrets: (c) => receivers.get(c.req.param('name')),
 *   dedup: postgresDedupStore(sql),
 *   onEvent: (event) => queue.enqueue(event),
 * }));
 * ```
 */
export function webhookReceiver<E extends Env = Env>(
  options: WebhookReceiverOptions<E>,
): MiddlewareHandler<E> {
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const typeBase = options.typeBase ?? 'https://holdfast.dev/problems/';
  const verifiers = new Map<string, Verifier>();
  const receiver = createReceiver<Context<E>>({
    onEvent: options.onEvent,
    ...(options.dedup ? { dedup: options.dedup } : {}),
    ...(options.retentionSeconds !== undefined ? { retentionSeconds: options.retentionSeconds } : {}),
    ...(options.types ? { types: options.types } : {}),
    ...(options.versions ? { versions: options.versions } : {}),
    ...(options.now ? { now: options.now } : {}),
  });

  const problem = (c: Context<E>, code: keyof typeof TITLES, status: number, detail: string): Response => {
    const requestId = options.requestId?.(c);
    const document = {
      type: typeBase + code,
      title: TITLES[code],
      status,
      detail,
      instance: new URL(c.req.url).pathname,
      code,
      ...(requestId !== undefined ? { requestId } : {}),
    };
    return new Response(JSON.stringify(document), {
      status,
      headers: { 'content-type': 'application/problem+json' },
    });
  };

  const verifierFor = (secrets: readonly string[]): Verifier => {
    const cacheKey = secrets.join('\n');
    let verifier = verifiers.get(cacheKey);
    if (!verifier) {
      verifier = createVerifier({
        secrets,
        ...(options.toleranceSeconds !== undefined ? { toleranceSeconds: options.toleranceSeconds } : {}),
        ...(options.now ? { now: options.now } : {}),
      });
      // Secrets change rarely; a bound keeps a rotation-happy config from growing the cache.
      if (verifiers.size >= 256) verifiers.clear();
      verifiers.set(cacheKey, verifier);
    }
    return verifier;
  };

  return async (c) => {
    const secrets = options.secrets(c);
    if (secrets === undefined || secrets.length === 0) {
      return problem(c, 'not_found', 404, 'No webhook receiver is configured here.');
    }
    const declared = Number(c.req.header('content-length') ?? '0');
    if (declared > maxBytes) {
      return problem(c, 'payload_too_large', 413, `The body exceeds ${maxBytes} bytes.`);
    }
    // Step 1: the raw bytes, never a parsed and re-serialised body.
    const body = new Uint8Array(await c.req.arrayBuffer());
    if (body.length > maxBytes) {
      return problem(c, 'payload_too_large', 413, `The body exceeds ${maxBytes} bytes.`);
    }
    const verified = verifierFor(secrets).verify(c.req.raw.headers, body);
    if (!verified.ok) return problem(c, verified.code, verified.status, verified.detail);
    const outcome = await receiver.handle(verified, c, options.scope ? options.scope(c) : c.req.path);
    if (!outcome.ok) return problem(c, outcome.code, outcome.status, outcome.detail);
    return outcome.status === 204 ? c.body(null, 204) : c.body(null, 200);
  };
}
