import type { Transaction } from '@holdfast/db';
import { idempotent } from './idempotent-db';
import type { IdempotencyOptions } from './options';
import type { IdempotentRequest } from './request';
import type { HandlerResult } from './response';

/**
 * Options of a door's `withIdempotency` on your own driver: the same in the Hono, Express and
 * Fastify doors. `transaction` takes the place of the postgres.js pool `sql`.
 *
 * @example
 * ```ts
 * const options: WithIdempotencyTransactionOptions<pg.PoolClient> = { transaction: pgTransaction(pool), account: 'acct_1', required: true };
 * ```
 */
export interface WithIdempotencyTransactionOptions<Tx> extends IdempotencyOptions {
  /**
   * Runs the whole flow (claim, handler, stored answer) in one transaction of yours: BEGIN,
   * `work(tx, db)` with your driver's transaction and the same as a `Db`, COMMIT; ROLLBACK and
   * rethrow when `work` throws. `@holdfast/db` builds one per driver, typed with its
   * transaction: `pgTransaction(pool)` (`tx`: `pg.PoolClient`), `drizzleTransaction(db, sql)`,
   * `kyselyTransaction(db)`, `prismaTransaction(prisma)`, `postgresTransaction(sql)`.
   */
  transaction: Transaction<Tx>;
  /** The authenticated account of the request (keys are scoped to it). */
  account: string;
  /** Answer 400 `idempotency_key_required` without a key. @defaultValue false */
  required?: boolean;
}

/** Carries a 5xx answer out of the caller's transaction so its writes roll back. */
class ServerErrorAnswer extends Error {
  readonly response: Response;
  constructor(response: Response) {
    super('handler answered 5xx');
    this.response = response;
  }
}

/**
 * The atomic flow on your own driver, as the doors run it and as a Fetch handler (Next.js,
 * Bun, Deno, Workers) calls it: `idempotent(db, ...)` inside `transaction`, so the claim (a row
 * of that transaction), `handler(tx)`'s business writes and the stored answer commit together,
 * and the answer is handed back only once they have. A concurrent request with the same key
 * waits on the claim, then replays. As on the postgres.js path, a 5xx answer rolls the writes
 * back (the claim with them) and is returned, and a throw rolls everything back and is
 * rethrown: either way the key stays free for a retry, and nothing is stored.
 *
 * @throws ProblemError 400 `idempotency_key_required` / `validation_failed`, 409
 * `idempotency_key_in_use`, 422 `idempotency_key_reused`; whatever `handler` throws.
 * @example
 * ```ts
 * export async function POST(request: Request): Promise<Response> {
 *   const body = await request.json();
 *   const key = request.headers.get('Idempotency-Key');
 *   return idempotentInTransaction(
 *     pgTransaction(pool), // from @holdfast/db/pg
 *     { key, account: 'acct_1', method: 'POST', path: '/v1/orders', body, required: true },
 *     async (client) => {
 *       await client.query('insert into orders (id, total) values ($1, $2)', [id, body.total]);
 *       return { status: 201, headers: { Location: `/v1/orders/${id}` }, body: { id } };
 *     },
 *   );
 * }
 * ```
 */
export async function idempotentInTransaction<Tx>(
  transaction: Transaction<Tx>,
  request: IdempotentRequest,
  handler: (tx: Tx) => HandlerResult | Promise<HandlerResult>,
  options: IdempotencyOptions = {},
): Promise<Response> {
  try {
    return await transaction(async (tx, db) => {
      const response = await idempotent(db, request, () => handler(tx), options);
      if (response.status >= 500) throw new ServerErrorAnswer(response);
      return response;
    });
  } catch (error) {
    if (error instanceof ServerErrorAnswer) return error.response;
    throw error;
  }
}
