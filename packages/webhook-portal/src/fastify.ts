import { toRequest, writeResponse } from '@holdfast/node-bridge';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { WebhookManagementApi } from './api/handler';

export type { WebhookManagementApi } from './api/handler';
export type { Authorize, PortalCaller } from './caller';

/**
 * A Fastify 5 plugin serving the management API under its `basePath`: register it without a
 * `prefix` (the base path is the API's own). In its scope request bodies are left unread, so
 * the API reads and bounds them itself.
 *
 * @example
 * ```ts
 * await app.register(webhookManagement(webhookManagementApi({ ...options, basePath: '/webhooks' })));
 * ```
 */
export function webhookManagement(api: WebhookManagementApi): (instance: FastifyInstance) => Promise<void> {
  return async (instance) => {
    instance.removeAllContentTypeParsers();
    instance.addContentTypeParser('*', (_request, _payload, done) => {
      done(null, undefined);
    });
    const handle = async (request: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      await writeResponse(
        reply.raw,
        await api(toRequest(request.raw, { res: reply.raw, ignoreParsedBody: true })),
      );
    };
    const base = api.basePath;
    if (base !== '') instance.all(base, handle);
    instance.all(`${base}/*`, handle);
  };
}
