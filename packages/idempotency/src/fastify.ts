import type { Db } from '@holdfast/db';
import type { FastifyRequest } from 'fastify';
import { idempotent, type WithIdempotencyOptions } from './idempotent';
import type { IdempotentRequest } from './request';
import type { HandlerResult } from './response';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's id (`requestId()` of `@holdfast/request-guards/fastify`), put into replayed problems. */
    requestId?: string;
  }
}

function pathOf(request: FastifyRequest): string {
  const query = request.url.indexOf('?');
  return query === -1 ? request.url : request.url.slice(0, query);
}

function requestOf(request: FastifyRequest, account: string, required: boolean): IdempotentRequest {
  const header = request.headers['idempotency-key'];
  const requestId = request.requestId;
  return {
    key: Array.isArray(header) ? header.join(', ') : header,
    account,
    method: request.method,
    path: pathOf(request),
    // Fastify's JSON parser (or a body guard) left the parsed value; no body is undefined.
    body: request.body ?? undefined,
    required,
    ...(requestId === undefined ? {} : { requestId }),
  };
}

/**
 * Idempotency for a Fastify 5 route: reads `Idempotency-Key`, the parsed body and the request
 * id, then runs `handler(tx, db)` as `idempotent()` does (the claim, the route's writes and the
 * stored answer commit in one transaction of `options.transaction`). Returns the Fetch
 * `Response` once that transaction has committed: `reply.send()` it. A repeat gets the stored
 * answer with `Idempotent-Replayed: true`. `tx` is typed by the transaction you pass. Problems
 * (400, 409, 422) are thrown to the error handler.
 *
 * @example
 * ```ts
 * const transaction = drizzleTransaction(db, sql); // from @holdfast/db/drizzle
 * app.post('/v1/orders', async (request, reply) =>
 *   reply.send(
 *     await withIdempotency(request, { transaction, account: 'acct_1' }, async (tx) => {
 *       await tx.insert(orders).values({ id });
 *       return { status: 201, body: { id } };
 *     }),
 *   ),
 * );
 * ```
 */
export function withIdempotency<Tx>(
  request: FastifyRequest,
  options: WithIdempotencyOptions<Tx>,
  handler: (tx: Tx, db: Db) => HandlerResult | Promise<HandlerResult>,
): Promise<Response> {
  const idempotentRequest = requestOf(request, options.account, options.required ?? false);
  return idempotent(options.transaction, idempotentRequest, handler, options);
}
