import type { Db, Transaction } from '@holdfast/db';
import { type IdempotencyOptions, resolveIdempotencyOptions } from './options';
import { answerExisting, type IdempotentRequest, prepareClaim } from './request';
import { type HandlerResult, storeResponse, toResponse } from './response';
import { claimKey, statements, storeAnswer } from './sql';

/**
 * Options of every door's `withIdempotency`: the transaction to run in, whose account the key
 * belongs to, and the settings of {@link IdempotencyOptions}.
 *
 * @example
 * ```ts
 * const options: WithIdempotencyOptions<pg.PoolClient> = { transaction: pgTransaction(pool), account: 'acct_1', required: true };
 * ```
 */
export interface WithIdempotencyOptions<Tx> extends IdempotencyOptions {
  /**
   * One transaction of your driver: `@holdfast/db` builds one per driver, typed with its
   * transaction, so the handler's `tx` needs no annotation: `pgTransaction(pool)` (`tx`:
   * `pg.PoolClient`), `postgresTransaction(sql)`, `drizzleTransaction(db, sql)`,
   * `kyselyTransaction(db)`, `prismaTransaction(prisma)`.
   */
  transaction: Transaction<Tx>;
  /** The authenticated account of the request (keys are scoped to it). */
  account: string;
  /** Answer 400 `idempotency_key_required` without a key. @defaultValue false */
  required?: boolean;
}

/** Carries a 5xx answer out of the transaction so its writes roll back. */
class ServerErrorAnswer extends Error {
  readonly response: Response;
  constructor(response: Response) {
    super('handler answered 5xx');
    this.response = response;
  }
}

/**
 * Runs `handler` at most once per (account, key), in ONE transaction of yours with the claim of
 * the key and the stored answer: the claim (a row of that transaction), the handler's business
 * writes through `tx` (and an outbox event through `db`, the same transaction as a `Db`) and the
 * answer commit together, or none of them does. So a crash can leave neither "charged but no
 * record" nor "record but not charged". The answer comes back once the transaction committed.
 *
 * A repeat gets the stored answer with `Idempotent-Replayed: true` and runs nothing; a request
 * with the same key and another method, path or body is 422. While the first runs, a repeat is
 * 409 `idempotency_key_in_use` with `Retry-After` (another request under the key still 422): the
 * claim holds the key's advisory lock in this transaction, so nobody waits on it. A 5xx answer rolls the writes back (the claim with them) and is
 * returned; a throw rolls everything back and is rethrown: either way the key stays free for
 * a retry and nothing is stored. Without a key (and none required) `handler` simply runs in the
 * transaction, and a 5xx still rolls it back.
 *
 * @throws ProblemError 400 `idempotency_key_required` / `validation_failed` (before the
 * transaction begins), 422 `idempotency_key_reused`, 409 `idempotency_key_in_use`; whatever
 * `handler` throws.
 * @example
 * ```ts
 * const response = await idempotent(
 *   pgTransaction(pool), // from @holdfast/db/pg: client is a pg.PoolClient
 *   { key: request.headers.get('Idempotency-Key'), account: 'acct_1', method: 'POST', path: '/v1/orders', body, required: true },
 *   async (client) => {
 *     await client.query('insert into orders (id, total) values ($1, $2)', [id, body.total]);
 *     return { status: 201, headers: { Location: `/v1/orders/${id}` }, body: { id } };
 *   },
 * );
 * ```
 */
export async function idempotent<Tx>(
  transaction: Transaction<Tx>,
  request: IdempotentRequest,
  handler: (tx: Tx, db: Db) => HandlerResult | Promise<HandlerResult>,
  options: IdempotencyOptions = {},
): Promise<Response> {
  const resolved = resolveIdempotencyOptions(options);
  const claim = await prepareClaim(request, resolved);
  const sql = statements(resolved.schema);
  try {
    return await transaction(async (tx, db) => {
      if (claim !== undefined) {
        const held = await claimKey(db, sql, claim);
        if (held.outcome !== 'claimed') return answerExisting(held, claim, resolved, request.requestId);
      }
      const response = toResponse(await handler(tx, db));
      if (response.status >= 500) throw new ServerErrorAnswer(response);
      if (claim === undefined) return response;
      const stored = await storeResponse(response, resolved.storedHeaders);
      // The claim is a row of this very transaction, so nobody else can have taken it.
      if (!(await storeAnswer(db, sql, claim, stored, claim.expiresAt)))
        throw new Error('the idempotency key claimed in this transaction was not found');
      return response;
    });
  } catch (error) {
    if (error instanceof ServerErrorAnswer) return error.response;
    throw error;
  }
}
