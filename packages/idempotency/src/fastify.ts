import type { FastifyReply, FastifyRequest } from 'fastify';
import type postgres from 'postgres';
import { type KeyedOutcome, runIdempotentFlow } from './flow';
import { idempotent, type TransactionHandler } from './idempotent';
import { idempotentInTransaction, type WithIdempotencyTransactionOptions } from './in-transaction';
import { type IdempotencyOptions, resolveIdempotencyOptions } from './options';
import type { IdempotentRequest } from './request';
import { type IdempotentWrite, idempotentStatement } from './statement';
import type { IdempotencyStore } from './store';

export type { WithIdempotencyTransactionOptions } from './in-transaction';

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

/** Options of {@link idempotency}. */
export interface IdempotencyHooksOptions extends IdempotencyOptions {
  /** Where keys and answers live: `memoryIdempotencyStore()` or `postgresIdempotencyStore(sql)`. */
  store: IdempotencyStore;
  /** The authenticated account of the request (keys are scoped to it). */
  account: (request: FastifyRequest) => string;
  /** Answer 400 `idempotency_key_required` without a key. @defaultValue false */
  required?: boolean;
}

/** The hooks {@link idempotency} gives: spread them into a route's options, or `addHook` them. */
export interface IdempotencyHooks {
  preHandler(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown>;
}

/** The payload `onSend` sees (a serialised string or Buffer, a stream, a Fetch Response) as bytes. */
async function bytesOf(payload: unknown): Promise<Uint8Array<ArrayBuffer> | null> {
  if (payload === undefined || payload === null) return null;
  if (typeof payload === 'string') return new TextEncoder().encode(payload);
  if (payload instanceof Uint8Array) return new Uint8Array(payload);
  if (payload instanceof Response)
    return payload.body === null ? null : new Uint8Array(await payload.arrayBuffer());
  if (typeof payload === 'object' && Symbol.asyncIterator in payload) {
    const chunks: Uint8Array[] = [];
    for await (const chunk of payload as AsyncIterable<Uint8Array | string>) {
      chunks.push(typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk);
    }
    return new Uint8Array(Buffer.concat(chunks));
  }
  return new TextEncoder().encode(String(payload));
}

function headersOf(reply: FastifyReply, payload: unknown): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value === undefined || name === 'content-length') continue;
    if (Array.isArray(value)) for (const one of value) headers.append(name, String(one));
    else headers.set(name, String(value));
  }
  // A Response sent as the payload brings its own headers (Fastify copies them after onSend).
  if (payload instanceof Response) for (const [name, value] of payload.headers) headers.set(name, value);
  return headers;
}

interface Pending {
  readonly deliver: (outcome: KeyedOutcome) => void;
  readonly flow: Promise<Response | undefined>;
}

/**
 * The plain flow as Fastify hooks: `preHandler` claims the key (a repeat is answered there with
 * the stored answer and `Idempotent-Replayed: true`; 400, 409 and 422 are thrown to the error
 * handler), the route runs, and `onSend` captures its answer (or the error handler's) and stores
 * it before the client gets it: 2xx and 4xx are stored, 5xx release the key. The same flow as
 * the Hono door (`runIdempotentFlow` decides).
 *
 * @example
 * ```ts
 * app.post('/v1/emails', { ...idempotency({ store, account: () => 'acct_1' }) }, async (request, reply) => reply.code(202).send(sent));
 * ```
 */
export function idempotency(options: IdempotencyHooksOptions): IdempotencyHooks {
  const resolved = resolveIdempotencyOptions(options);
  const required = options.required ?? false;
  const pending = new WeakMap<FastifyRequest, Pending>();
  return {
    async preHandler(request, reply) {
      const idempotent = requestOf(request, options.account(request), required);
      let deliver: ((outcome: KeyedOutcome) => void) | undefined;
      let started: () => void = () => {};
      const keyed = new Promise<'keyed'>((resolve) => {
        started = () => resolve('keyed');
      });
      const flow = runIdempotentFlow(options.store, idempotent, resolved, {
        unkeyed: async () => undefined,
        keyed: () =>
          new Promise<KeyedOutcome>((resolve) => {
            deliver = resolve;
            started();
          }),
      });
      const first = await Promise.race([flow, keyed]);
      if (first === 'keyed' && deliver) {
        pending.set(request, { deliver, flow });
        return;
      }
      if (first instanceof Response) await reply.send(first);
    },
    async onSend(request, reply, payload) {
      const held = pending.get(request);
      if (!held) return payload;
      pending.delete(request);
      const body = await bytesOf(payload);
      // A Response payload (the error handler's problem) sets the status only after onSend.
      const status = payload instanceof Response ? payload.status : reply.statusCode;
      const nullBody = status === 204 || status === 205 || status === 304;
      held.deliver({
        kind: 'answer',
        response: new Response(nullBody ? null : body, { status, headers: headersOf(reply, payload) }),
      });
      await held.flow;
      if (payload instanceof Response) return new Response(body, payload);
      return body === null ? payload : Buffer.from(body);
    },
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
 * The atomic flow from a Fastify route: reads `Idempotency-Key`, the parsed body and the
 * request id, then runs `handler(tx)` so the route's writes and the stored answer commit in one
 * transaction. Returns the Fetch `Response` once that transaction has committed: `reply.send()` it.
 *
 * `{ sql }` is a postgres.js pool (`idempotent()` of `/postgres`: the claim commits on its own);
 * `{ transaction }` is one transaction of your own driver, in which the claim, `handler(tx)` and
 * the answer all run (`idempotent(db)` of the root). The same options as the Hono and Express
 * doors; either way a 5xx answer or a throw rolls the writes back and frees the key.
 *
 * @example
 * ```ts
 * app.post('/v1/payments', async (request, reply) =>
 *   reply.send(await withIdempotency(request, { sql, account: 'acct_1' }, async (tx) => ({ status: 201, body: await create(tx) }))),
 * );
 * // node-postgres: pgTransaction runs work(client, fromPg(client)) between begin and commit
 * app.post('/v1/orders', async (request, reply) =>
 *   reply.send(
 *     await withIdempotency(request, { transaction: pgTransaction, account: 'acct_1' }, async (client) => {
 *       await client.query('insert into orders (id) values ($1)', [id]);
 *       return { status: 201, body: { id } };
 *     }),
 *   ),
 * );
 * ```
 */
export function withIdempotency(
  request: FastifyRequest,
  options: WithIdempotencyOptions,
  handler: TransactionHandler,
): Promise<Response>;
/**
 * {@link withIdempotency} on your own driver: the claim, `handler(tx)` and the stored answer run
 * in one transaction of `options.transaction` (node-postgres, Drizzle, Kysely, Prisma); the
 * answer comes back after its COMMIT.
 *
 * @example
 * ```ts
 * app.post('/v1/orders', async (request, reply) => reply.send(await withIdempotency(request, { transaction: pgTransaction, account: 'acct_1' }, (client) => create(client))));
 * ```
 */
export function withIdempotency<Tx>(
  request: FastifyRequest,
  options: WithIdempotencyTransactionOptions<Tx>,
  handler: TransactionHandler<Tx>,
): Promise<Response>;
export function withIdempotency<Tx>(
  request: FastifyRequest,
  options: WithIdempotencyOptions | WithIdempotencyTransactionOptions<Tx>,
  handler: TransactionHandler | TransactionHandler<Tx>,
): Promise<Response> {
  const idempotentRequest = requestOf(request, options.account, options.required ?? false);
  if ('transaction' in options) {
    return idempotentInTransaction(
      options.transaction,
      idempotentRequest,
      handler as TransactionHandler<Tx>,
      options,
    );
  }
  return idempotent(options.sql, idempotentRequest, handler as TransactionHandler, options);
}

/**
 * {@link idempotentStatement} from a Fastify route: claims the key, writes and stores the answer
 * in one statement. Returns the Fetch `Response`: `reply.send()` it.
 *
 * @example
 * ```ts
 * app.post('/v1/notes', async (request, reply) => reply.send(await withIdempotentStatement(request, { sql, account: 'acct_1' }, write)));
 * ```
 */
export function withIdempotentStatement(
  request: FastifyRequest,
  options: WithIdempotencyOptions,
  write: IdempotentWrite,
): Promise<Response> {
  return idempotentStatement(
    options.sql,
    requestOf(request, options.account, options.required ?? false),
    write,
    options,
  );
}
