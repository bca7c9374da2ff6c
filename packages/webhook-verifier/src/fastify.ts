import { toRequest } from '@holdfast/node-bridge';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type WebhookHandlerOptions, webhookHandler } from './receiver-handler';

/** Options of {@link webhookReceiver}: the core's options, its hooks given the `FastifyRequest`. */
export type WebhookReceiverOptions = WebhookHandlerOptions<FastifyRequest>;

/**
 * Makes `instance` (a plugin's own scope: other routes keep their parsers) leave every request
 * body unparsed, so the receiver reads and verifies the exact bytes, capped at its `maxBytes`.
 *
 * @example
 * ```ts
 * app.register(async (hooks) => {
 *   rawBodies(hooks);
 *   hooks.post('/hooks/:name', webhookReceiver({ secrets, onEvent }));
 * });
 * ```
 */
export function rawBodies(instance: FastifyInstance): void {
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser('*', (_request, _payload, done) => {
    done(null, undefined);
  });
}

/**
 * A Fastify 5 route handler receiving Standard Webhooks: the same verification, fast
 * acknowledgement (204 accepted, 200 duplicate, stale or unknown type), durable hand-off and
 * problem answers as the Hono door (`webhookHandler` of `/receiver` decides; this only
 * translates). `allowedSources` judges `request.socket.remoteAddress` unless `clientAddress`
 * says otherwise. Register it in a scope where {@link rawBodies} ran: a body Fastify already
 * parsed into an object is refused with an error, never verified against its re-serialisation.
 *
 * @example
 * ```ts
 * hooks.post('/hooks/:name', webhookReceiver({ secrets: () => [secret], onEvent: (event) => inbox.add(event) }));
 * ```
 */
export function webhookReceiver(
  options: WebhookReceiverOptions,
): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  // The connection's peer by default; `request.ip` honours Fastify's `trustProxy` instead.
  const handle = webhookHandler<FastifyRequest>({
    ...options,
    clientAddress: options.clientAddress ?? ((request) => request.socket.remoteAddress),
  });
  return async (request, reply) => {
    const body: unknown = request.body;
    if (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array)) {
      throw new Error('webhookReceiver needs the raw body: call rawBodies(instance) in its scope');
    }
    const fetchRequest = toRequest(request.raw, { res: reply.raw, body: body ?? undefined });
    return reply.send(await handle(fetchRequest, request));
  };
}
