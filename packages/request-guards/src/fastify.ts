import { toRequest } from '@holdfast/node-bridge';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type JsonBodyOptions, jsonBodyReader } from './json-body';
import { noFieldsProblem } from './no-fields';
import { nulProblem } from './nul';
import { type RequestIdOptions, requestIdSettings } from './request-id';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The request's id, rendered in problem bodies when a request-id hook set it
     * (`requestId()` from `@holdfast/request-guards/fastify` does).
     */
    requestId?: string;
  }
}

/**
 * An `onRequest` hook giving every request a fresh id, `request.requestId` (which `onProblem()`
 * of `@holdfast/problem-details/fastify` renders), and the `Request-Id` header (or `header`) on
 * every response, success or failure. Incoming ids are not trusted: a client could otherwise
 * forge entries in the server's logs. Add it on the root instance, first.
 *
 * @example
 * ```ts
 * app.addHook('onRequest', requestId());
 * ```
 */
export function requestId(
  options: RequestIdOptions = {},
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const { header, generate } = requestIdSettings(options);
  return async (request, reply) => {
    const id = generate();
    request.requestId = id;
    reply.header(header, id);
  };
}

/**
 * Makes `instance` (the root, or a plugin's own scope) read every request body with the same
 * guards as the Hono door (`jsonBodyReader`), in place of Fastify's own parsers: 413
 * `payload_too_large`, 415 `unsupported_media_type`, 400 `invalid_json`, 400 `validation_failed`
 * for the shape, the depth and the text rule. The value is `request.body` (`undefined` for an
 * empty body). `maxBytes` replaces Fastify's `bodyLimit` for these bodies.
 *
 * @example
 * ```ts
 * jsonBody(app, { maxBytes: 1024 * 1024 });
 * app.post('/v1/orders', async (request, reply) => reply.code(201).send(request.body));
 * ```
 */
export function jsonBody(instance: FastifyInstance, options: JsonBodyOptions = {}): void {
  const read = jsonBodyReader(options);
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser('*', (request: FastifyRequest) =>
    read(toRequest(request.raw, { ignoreParsedBody: true })),
  );
}

/**
 * An `onRequest` hook refusing U+0000 in the path (404 `not_found`) and in query parameter names
 * and values (400 `validation_failed`, `invalid_characters`), by `nulProblem`.
 *
 * @example
 * ```ts
 * app.addHook('onRequest', refuseNul());
 * ```
 */
export function refuseNul(): (request: FastifyRequest) => Promise<void> {
  return async (request) => {
    const refused = nulProblem(request.url);
    if (refused) throw refused;
  };
}

/**
 * Refuses a body with fields for an action that takes none (see `noFieldsProblem`): call it
 * first in the handler; `jsonBody()` read the body.
 *
 * @example
 * ```ts
 * app.post('/orders/:id/cancel', async (request) => { refuseFields(request); return cancel(request.params.id); });
 * ```
 */
export function refuseFields(request: FastifyRequest): void {
  const refused = noFieldsProblem(request.body);
  if (refused) throw refused;
}
