import type { Db } from '@holdfast/db';
import { requestUrl, writeResponse } from '@holdfast/node-bridge';
import type { Response as ExpressResponse, Request } from 'express';
import { idempotent, type WithIdempotencyOptions } from './idempotent';
import type { IdempotentRequest } from './request';
import type { HandlerResult } from './response';

declare global {
  namespace Express {
    interface Request {
      /** The request's id (`requestId()` of `@holdfast/request-guards/express`), put into replayed problems. */
      requestId?: string;
    }
  }
}

/** The parsed body for the fingerprint: what `express.json()` (or a body guard) left in `req.body`. */
function bodyOf(req: Request): unknown {
  const body: unknown = req.body;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
    if (text === '') return undefined;
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return body;
}

function requestOf(req: Request, account: string, required: boolean): IdempotentRequest {
  const requestId = req.requestId;
  return {
    key: req.get('Idempotency-Key'),
    account,
    method: req.method,
    path: requestUrl(req).pathname,
    body: bodyOf(req),
    required,
    ...(requestId === undefined ? {} : { requestId }),
  };
}

/**
 * Idempotency for an Express 5 route, after `express.json()`: reads `Idempotency-Key`, the
 * parsed body and the request id from `req`, runs `handler(tx, db)` as `idempotent()` does (the
 * claim, the route's writes and the stored answer commit in one transaction of
 * `options.transaction`), and sends the answer on `res` once that transaction has committed. A
 * repeat gets the stored answer with `Idempotent-Replayed: true`. `tx` is typed by the
 * transaction you pass. Problems (400, 409, 422) reject, so Express 5 hands them to the error
 * middleware.
 *
 * @example
 * ```ts
 * const transaction = pgTransaction(pool); // from @holdfast/db/pg
 * app.post('/v1/orders', (req, res) =>
 *   withIdempotency(req, res, { transaction, account: 'acct_1', required: true }, async (client) => {
 *     await client.query('insert into orders (id) values ($1)', [id]);
 *     return { status: 201, body: { id } };
 *   }),
 * );
 * ```
 */
export async function withIdempotency<Tx>(
  req: Request,
  res: ExpressResponse,
  options: WithIdempotencyOptions<Tx>,
  handler: (tx: Tx, db: Db) => HandlerResult | Promise<HandlerResult>,
): Promise<void> {
  const request = requestOf(req, options.account, options.required ?? false);
  await writeResponse(res, await idempotent(options.transaction, request, handler, options));
}
