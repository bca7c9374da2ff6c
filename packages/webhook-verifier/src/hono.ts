import type { Context, Env, MiddlewareHandler } from 'hono';
import { type WebhookHandlerOptions, webhookHandler } from './receiver-handler';

/**
 * The peer address on `@hono/node-server` (what its `getConnInfo` reads: the Node request in
 * `c.env.incoming`), without depending on it. Elsewhere `undefined`: pass `clientAddress`.
 */
function nodePeerAddress(c: Context): string | undefined {
  const env: unknown = c.env;
  if (typeof env !== 'object' || env === null || !('incoming' in env)) return undefined;
  const incoming: unknown = env.incoming;
  if (typeof incoming !== 'object' || incoming === null || !('socket' in incoming)) return undefined;
  const socket: unknown = incoming.socket;
  if (typeof socket !== 'object' || socket === null || !('remoteAddress' in socket)) return undefined;
  return typeof socket.remoteAddress === 'string' ? socket.remoteAddress : undefined;
}

/** Options of {@link webhookReceiver}: the core's options, its hooks given Hono's `Context`. */
export type WebhookReceiverOptions<E extends Env = Env> = WebhookHandlerOptions<Context<E>>;

/**
 * A Hono handler that receives Standard Webhooks (https://www.standardwebhooks.com/): reads the
 * raw body (at most `maxBytes`), verifies it against the secrets `secrets(c)` gives,
 * acknowledges duplicates, stale events and unknown types with 200 and accepted events with 204
 * after `onEvent` hands them off. Failures are `application/problem+json`: 400
 * `webhook_timestamp_out_of_window`, 401 `webhook_signature_invalid`, 400 `invalid_json`, 400
 * `validation_failed` (a `webhook-id` over `maxIdLength`, a payload nested over `maxDepth`),
 * 404 `not_found`, 413 `payload_too_large`, 403 `webhook_source_forbidden` (outside
 * `allowedSources`, judged on the Node peer address by default). Hooks let the app limit per address before
 * verification and per receiver after it, and render answers its own way.
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
  // Hono's own empty answer keeps the headers a middleware prepared with c.header().
  const handle = webhookHandler<Context<E>>({
    ...options,
    clientAddress: options.clientAddress ?? nodePeerAddress,
    acknowledge: options.acknowledge ?? ((c, ack) => c.body(null, ack.status === 204 ? 204 : 200)),
  });
  return (c) => handle(c.req.raw, c);
}
