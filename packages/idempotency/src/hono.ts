import type { Db } from '@holdfast/db';
import type {} from '@holdfast/problem-details/hono';
import type { Context } from 'hono';
import { idempotent, type WithIdempotencyOptions } from './idempotent';
import type { IdempotentRequest } from './request';
import type { HandlerResult } from './response';

/**
 * The request body for the fingerprint: the value `jsonBody()` parsed, else the body text
 * parsed as JSON (Hono caches it, so the route can still read it), else the text itself.
 */
async function bodyOf(c: Context): Promise<unknown> {
  const parsed: unknown = c.get('jsonBody');
  if (parsed !== undefined) return parsed;
  // jsonBody() read an empty body to its end without caching it: there was no body.
  if (c.req.raw.bodyUsed && !('arrayBuffer' in c.req.bodyCache)) return undefined;
  const text = await c.req.text();
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function requestOf(c: Context, account: string, required: boolean): Promise<IdempotentRequest> {
  const requestId: string | undefined = c.get('requestId');
  return {
    key: c.req.header('Idempotency-Key'),
    account,
    method: c.req.method,
    path: c.req.path,
    body: await bodyOf(c),
    required,
    ...(requestId === undefined ? {} : { requestId }),
  };
}

/**
 * Idempotency for a Hono route: reads `Idempotency-Key`, the body (what `jsonBody()` parsed, or
 * the text) and the request id from `c`, then runs `handler(tx, db)` as `idempotent()` does: the
 * claim, the route's business writes and the stored answer commit in one transaction of
 * `options.transaction`. Returns the `Response` to send, once that transaction has committed; a
 * repeat gets the stored answer with `Idempotent-Replayed: true` (and its own `Request-Id`).
 * `tx` is typed by the transaction you pass (`pgTransaction(pool)` gives a `pg.PoolClient`).
 * Problems (400, 409, 422) are thrown for `onProblem()` to render.
 *
 * @example
 * ```ts
 * const transaction = pgTransaction(pool); // from @holdfast/db/pg
 * app.post('/v1/orders', (c) =>
 *   withIdempotency(c, { transaction, account: c.get('account'), required: true }, async (client) => {
 *     await client.query('insert into orders (id) values ($1)', [id]);
 *     return { status: 201, headers: { Location: `/v1/orders/${id}` }, body: { id } };
 *   }),
 * );
 * ```
 */
export async function withIdempotency<Tx>(
  c: Context,
  options: WithIdempotencyOptions<Tx>,
  handler: (tx: Tx, db: Db) => HandlerResult | Promise<HandlerResult>,
): Promise<Response> {
  return idempotent(
    options.transaction,
    await requestOf(c, options.account, options.required ?? false),
    handler,
    options,
  );
}
