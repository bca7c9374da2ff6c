import { toRequest, writeResponse } from '@holdfast/node-bridge';
import type { Request, RequestHandler } from 'express';
import { type WebhookHandlerOptions, webhookHandler } from './receiver-handler';

/** Options of {@link webhookReceiver}: the core's options, its hooks given Express's `Request`. */
export type WebhookReceiverOptions = WebhookHandlerOptions<Request>;

/**
 * An Express 5 route handler receiving Standard Webhooks: the same verification, fast
 * acknowledgement (204 accepted, 200 duplicate, stale or unknown type), durable hand-off and
 * problem answers as the Hono door (`webhookHandler` of `/receiver` decides; this only
 * translates). The signature covers the exact bytes: mount it where no JSON parser ran
 * (`express.json()` on other routes only), or behind `express.raw({ type: '*\/*' })`, whose
 * Buffer is used as is. `allowedSources` judges `req.socket.remoteAddress` unless
 * `clientAddress` says otherwise. A body some parser already turned into an object is refused with an
 * error, never verified against its re-serialisation.
 *
 * @example
 * ```ts
 * app.post('/hooks/:name', webhookReceiver({ secrets: (req) => receivers.get(String(req.params.name)), onEvent }));
 * ```
 */
export function webhookReceiver(options: WebhookReceiverOptions): RequestHandler {
  // The connection's peer by default; `req.ip` honours Express's `trust proxy` setting instead.
  const handle = webhookHandler<Request>({
    ...options,
    clientAddress: options.clientAddress ?? ((req) => req.socket.remoteAddress),
  });
  return async (req, res) => {
    const body: unknown = req.body;
    if (body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array)) {
      throw new Error(
        'webhookReceiver needs the raw body: register it before express.json(), or use express.raw() on its route',
      );
    }
    await writeResponse(res, await handle(toRequest(req, { res }), req));
  };
}
