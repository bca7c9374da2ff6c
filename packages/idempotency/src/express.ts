import { type CapturedResponse, captureResponse, requestUrl, writeResponse } from '@holdfast/node-bridge';
import type { Response as ExpressResponse, Request, RequestHandler } from 'express';
import type postgres from 'postgres';
import { runIdempotentFlow } from './flow';
import { idempotent, type TransactionHandler } from './idempotent';
import { idempotentInTransaction, type WithIdempotencyTransactionOptions } from './in-transaction';
import { type IdempotencyOptions, resolveIdempotencyOptions } from './options';
import type { IdempotentRequest } from './request';
import { type IdempotentWrite, idempotentStatement } from './statement';
import type { IdempotencyStore } from './store';

export type { WithIdempotencyTransactionOptions } from './in-transaction';

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

/** Options of the {@link idempotency} middleware. */
export interface IdempotencyMiddlewareOptions extends IdempotencyOptions {
  /** Where keys and answers live: `memoryIdempotencyStore()` or `postgresIdempotencyStore(sql)`. */
  store: IdempotencyStore;
  /** The authenticated account of the request (keys are scoped to it). */
  account: (req: Request) => string;
  /** Answer 400 `idempotency_key_required` without a key. @defaultValue false */
  required?: boolean;
}

const UNKEYED = Symbol('unkeyed');

/**
 * The plain middleware, after `express.json()`: the route runs at most once per key and
 * account; its answer (what it or the error middleware wrote) is captured and stored before the
 * client gets it, and a repeat gets the stored answer with `Idempotent-Replayed: true`. 2xx and
 * 4xx answers are stored, 5xx and crashes release the key. Problems (400, 409, 422) go to the
 * error middleware. The same flow as the Hono door (`runIdempotentFlow` decides).
 *
 * @example
 * ```ts
 * app.post('/v1/emails', idempotency({ store, account: (req) => req.principal.account }), (req, res) => { res.status(202).json(sent); });
 * ```
 */
export function idempotency(options: IdempotencyMiddlewareOptions): RequestHandler {
  const resolved = resolveIdempotencyOptions(options);
  const required = options.required ?? false;
  return async (req, res, next) => {
    const request = requestOf(req, options.account(req), required);
    let captured: CapturedResponse | undefined;
    let answer: Response | typeof UNKEYED;
    try {
      answer = await runIdempotentFlow(options.store, request, resolved, {
        unkeyed: async (): Promise<typeof UNKEYED> => {
          next();
          return UNKEYED;
        },
        async keyed() {
          captured = captureResponse(res);
          next();
          return { kind: 'answer', response: await captured.response };
        },
      });
    } catch (error) {
      // What the error middleware writes now must reach the client.
      captured?.restore();
      throw error;
    }
    if (answer === UNKEYED) return;
    if (captured) await captured.release(answer);
    else await writeResponse(res, answer);
  };
}

/** Options of {@link withIdempotency} and {@link withIdempotentStatement}. */
export interface WithIdempotencyOptions extends IdempotencyOptions {
  /** The postgres.js pool (never a transaction): the claim commits on its own. */
  sql: postgres.Sql;
  /** The authenticated account of the request (keys are scoped to it). */
  account: string;
  /** Answer 400 `idempotency_key_required` without a key. @defaultValue false */
  required?: boolean;
}

/**
 * The atomic flow from an Express route: reads `Idempotency-Key`, the parsed body and the
 * request id from `req`, runs `handler(tx)` so the route's writes and the stored answer commit
 * in one transaction, and sends the answer on `res` once that transaction has committed.
 *
 * `{ sql }` is a postgres.js pool (`idempotent()` of `/postgres`: the claim commits on its own);
 * `{ transaction }` is one transaction of your own driver, in which the claim, `handler(tx)` and
 * the answer all run (`idempotent(db)` of the root). The same options as the Hono and Fastify
 * doors; either way a 5xx answer or a throw rolls the writes back and frees the key.
 *
 * @example
 * ```ts
 * app.post('/v1/payments', (req, res) =>
 *   withIdempotency(req, res, { sql, account: 'acct_1', required: true }, async (tx) => {
 *     const [payment] = await tx`insert into payments ${tx(req.body)} returning *`;
 *     return { status: 201, headers: { Location: `/v1/payments/${payment.id}` }, body: payment };
 *   }),
 * );
 * // node-postgres: pgTransaction runs work(client, fromPg(client)) between begin and commit
 * app.post('/v1/orders', (req, res) =>
 *   withIdempotency(req, res, { transaction: pgTransaction, account: 'acct_1' }, async (client) => {
 *     await client.query('insert into orders (id) values ($1)', [id]);
 *     return { status: 201, body: { id } };
 *   }),
 * );
 * ```
 */
export function withIdempotency(
  req: Request,
  res: ExpressResponse,
  options: WithIdempotencyOptions,
  handler: TransactionHandler,
): Promise<void>;
/**
 * {@link withIdempotency} on your own driver: the claim, `handler(tx)` and the stored answer run
 * in one transaction of `options.transaction` (node-postgres, Drizzle, Kysely, Prisma); the
 * answer is sent after its COMMIT.
 *
 * @example
 * ```ts
 * app.post('/v1/orders', (req, res) => withIdempotency(req, res, { transaction: pgTransaction, account: 'acct_1' }, (client) => create(client)));
 * ```
 */
export function withIdempotency<Tx>(
  req: Request,
  res: ExpressResponse,
  options: WithIdempotencyTransactionOptions<Tx>,
  handler: TransactionHandler<Tx>,
): Promise<void>;
export async function withIdempotency<Tx>(
  req: Request,
  res: ExpressResponse,
  options: WithIdempotencyOptions | WithIdempotencyTransactionOptions<Tx>,
  handler: TransactionHandler | TransactionHandler<Tx>,
): Promise<void> {
  const request = requestOf(req, options.account, options.required ?? false);
  const answer =
    'transaction' in options
      ? await idempotentInTransaction(
          options.transaction,
          request,
          handler as TransactionHandler<Tx>,
          options,
        )
      : await idempotent(options.sql, request, handler as TransactionHandler, options);
  await writeResponse(res, answer);
}

/**
 * {@link idempotentStatement} from an Express route: claims the key, writes and stores the
 * answer in one statement, and sends the answer on `res`.
 *
 * @example
 * ```ts
 * app.post('/v1/notes', (req, res) => withIdempotentStatement(req, res, { sql, account: 'acct_1' }, write));
 * ```
 */
export async function withIdempotentStatement(
  req: Request,
  res: ExpressResponse,
  options: WithIdempotencyOptions,
  write: IdempotentWrite,
): Promise<void> {
  const request = requestOf(req, options.account, options.required ?? false);
  await writeResponse(res, await idempotentStatement(options.sql, request, write, options));
}
