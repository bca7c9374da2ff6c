import type {} from '@holdfast/problem-details/hono';
import type { Context, MiddlewareHandler } from 'hono';
import type postgres from 'postgres';
import { runIdempotentFlow } from './flow';
import { idempotent, type TransactionHandler } from './idempotent';
import { idempotentInTransaction, type WithIdempotencyTransactionOptions } from './in-transaction';
import { type IdempotencyOptions, resolveIdempotencyOptions } from './options';
import type { IdempotentRequest } from './request';
import { type IdempotentWrite, idempotentStatement } from './statement';
import type { IdempotencyStore } from './store';

export type { WithIdempotencyTransactionOptions } from './in-transaction';

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
  const typeBase: string | undefined = c.get('problemTypeBase');
  return {
    key: c.req.header('Idempotency-Key'),
    account,
    method: c.req.method,
    path: c.req.path,
    body: await bodyOf(c),
    required,
    ...(requestId === undefined ? {} : { requestId }),
    ...(typeBase === undefined ? {} : { typeBase }),
  };
}

/** Options of the {@link idempotency} middleware. */
export interface IdempotencyMiddlewareOptions extends IdempotencyOptions {
  /** Where keys and answers live: `memoryIdempotencyStore()` or `postgresIdempotencyStore(sql)`. */
  store: IdempotencyStore;
  /** The authenticated account of the request (keys are scoped to it). */
  account: (c: Context) => string;
  /** Answer 400 `idempotency_key_required` without a key. @defaultValue false */
  required?: boolean;
}

/**
 * The plain middleware, for routes with no database of their own: the route runs at most
 * once per key and account; a repeat gets the stored answer with `Idempotent-Replayed: true`
 * (the `requestId()` middleware outside gives it its own `Request-Id`); 2xx and 4xx answers
 * are stored, 5xx and crashes release the key. Problems (400, 409, 422) are thrown for
 * `onProblem()` to render. Routes that write to PostgreSQL should use {@link withIdempotency}.
 *
 * @example
 * ```ts
 * const store = postgresIdempotencyStore(sql);
 * app.post('/v1/emails', idempotency({ store, account: (c) => c.get('account') }), (c) => c.json(sent, 202));
 * ```
 */
export function idempotency(options: IdempotencyMiddlewareOptions): MiddlewareHandler {
  const resolved = resolveIdempotencyOptions(options);
  const required = options.required ?? false;
  return async (c, next) => {
    const request = await requestOf(c, options.account(c), required);
    return runIdempotentFlow(options.store, request, resolved, {
      unkeyed: next,
      async keyed() {
        await next();
        // Hono has already turned a thrown error into c.res through app.onError.
        return { kind: 'answer', response: c.res };
      },
    });
  };
}

/** Options of {@link withIdempotency}. */
export interface WithIdempotencyOptions extends IdempotencyOptions {
  /** The postgres.js pool (never a transaction): the claim commits on its own. */
  sql: postgres.Sql;
  /** The authenticated account of the request (keys are scoped to it). */
  account: string;
  /** Answer 400 `idempotency_key_required` without a key. @defaultValue false */
  required?: boolean;
}

/**
 * The atomic flow from a Hono route: reads `Idempotency-Key`, the body and the request id
 * from `c`, then runs `handler(tx)` so the route's business writes and the stored answer commit
 * in one transaction. Returns the `Response` to send, once that transaction has committed.
 *
 * Two ways in, one option shape in every door: `{ sql }`, a postgres.js pool (the claim commits
 * on its own, then `handler(tx)` runs in a postgres.js transaction: `idempotent()` of
 * `/postgres`); or `{ transaction }`, one transaction of your own driver (node-postgres,
 * Drizzle, Kysely, Prisma), in which the claim, `handler(tx)` and the answer all run
 * (`idempotent(db)` of the root; a concurrent request with the same key waits, then replays).
 * Either way a 5xx answer or a throw rolls the writes back and frees the key.
 *
 * @example
 * ```ts
 * app.post('/v1/payments', async (c) => {
 *   const body = PaymentInput.parse(c.get('jsonBody'));
 *   return withIdempotency(c, { sql, account: c.get('account'), required: true }, async (tx) => {
 *     const [payment] = await tx`insert into payments ${tx({ ...body, account: c.get('account') })} returning *`;
 *     return { status: 201, headers: { Location: `/v1/payments/${payment.id}` }, body: payment };
 *   });
 * });
 * // node-postgres: pgTransaction runs work(client, fromPg(client)) between begin and commit
 * app.post('/v1/orders', (c) =>
 *   withIdempotency(c, { transaction: pgTransaction, account: 'acct_1' }, async (client) => {
 *     await client.query('insert into orders (id) values ($1)', [id]);
 *     return { status: 201, body: { id } };
 *   }),
 * );
 * ```
 */
export function withIdempotency(
  c: Context,
  options: WithIdempotencyOptions,
  handler: TransactionHandler,
): Promise<Response>;
/**
 * {@link withIdempotency} on your own driver: the claim, `handler(tx)` and the stored answer run
 * in one transaction of `options.transaction` (node-postgres, Drizzle, Kysely, Prisma).
 *
 * @example
 * ```ts
 * app.post('/v1/orders', (c) => withIdempotency(c, { transaction: pgTransaction, account: 'acct_1' }, (client) => create(client)));
 * ```
 */
export function withIdempotency<Tx>(
  c: Context,
  options: WithIdempotencyTransactionOptions<Tx>,
  handler: TransactionHandler<Tx>,
): Promise<Response>;
export async function withIdempotency<Tx>(
  c: Context,
  options: WithIdempotencyOptions | WithIdempotencyTransactionOptions<Tx>,
  handler: TransactionHandler | TransactionHandler<Tx>,
): Promise<Response> {
  const request = await requestOf(c, options.account, options.required ?? false);
  if ('transaction' in options) {
    return idempotentInTransaction(options.transaction, request, handler as TransactionHandler<Tx>, options);
  }
  return idempotent(options.sql, request, handler as TransactionHandler, options);
}

/**
 * {@link idempotentStatement} from a Hono route: reads `Idempotency-Key`, the body and the
 * request id from `c`, then claims the key, writes and stores the answer in one statement.
 * For writes whose answer is known before they run; others use {@link withIdempotency}.
 *
 * @example
 * ```ts
 * app.post('/v1/notes', async (c) => {
 *   const note = { id: crypto.randomUUID(), text: String(c.get('jsonBody')) };
 *   return withIdempotentStatement(c, { sql, account: c.get('account') }, {
 *     answer: { status: 201, headers: { Location: `/v1/notes/${note.id}` }, body: note },
 *     writes: (claimed) => sql`n as (insert into notes (id, text) select ${note.id}, ${note.text} where ${claimed})`,
 *   });
 * });
 * ```
 */
export async function withIdempotentStatement(
  c: Context,
  options: WithIdempotencyOptions,
  write: IdempotentWrite,
): Promise<Response> {
  const request = await requestOf(c, options.account, options.required ?? false);
  return idempotentStatement(options.sql, request, write, options);
}
