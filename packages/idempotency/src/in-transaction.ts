import type { Db } from '@holdfast/db';
import type { TransactionHandler } from './idempotent';
import { idempotent } from './idempotent-db';
import type { IdempotencyOptions } from './options';
import type { IdempotentRequest } from './request';

/**
 * One transaction of your own driver, as the doors' `transaction` option takes it: run `work`
 * with your transaction (`tx`, what the route's handler writes through) and the same
 * transaction as a {@link Db}; commit when `work` resolves; roll back and rethrow what it threw
 * when it throws. One line per driver (`fromPg(client)`, `fromDrizzle(tx, sql)`,
 * `fromKysely(trx)`, `fromPrisma(tx)`, `fromPostgres(tx)` give the `Db`).
 *
 * @example
 * ```ts
 * // node-postgres, which has no transaction helper of its own
 * const pgTransaction: IdempotencyTransaction<pg.PoolClient> = async (work) => {
 *   const client = await pool.connect();
 *   try {
 *     await client.query('begin');
 *     const answer = await work(client, fromPg(client));
 *     await client.query('commit');
 *     return answer;
 *   } catch (error) {
 *     await client.query('rollback');
 *     throw error;
 *   } finally {
 *     client.release();
 *   }
 * };
 * // Drizzle, Kysely, Prisma: their own transaction, and the same transaction as a Db
 * const drizzleTransaction: IdempotencyTransaction<DrizzleTx> = (work) => db.transaction((tx) => work(tx, fromDrizzle(tx, sql)));
 * const kyselyTransaction: IdempotencyTransaction<Transaction<DB>> = (work) => kysely.transaction().execute((trx) => work(trx, fromKysely(trx)));
 * const prismaTransaction: IdempotencyTransaction<Prisma.TransactionClient> = (work) => prisma.$transaction((tx) => work(tx, fromPrisma(tx)));
 * ```
 */
export type IdempotencyTransaction<Tx> = (work: (tx: Tx, db: Db) => Promise<Response>) => Promise<Response>;

/**
 * Options of a door's `withIdempotency` on your own driver: the same in the Hono, Express and
 * Fastify doors. `transaction` takes the place of the postgres.js pool `sql`.
 *
 * @example
 * ```ts
 * const options: WithIdempotencyTransactionOptions<pg.PoolClient> = { transaction: pgTransaction, account: 'acct_1', required: true };
 * ```
 */
export interface WithIdempotencyTransactionOptions<Tx> extends IdempotencyOptions {
  /** Runs the whole flow (claim, handler, stored answer) in one transaction of yours. */
  transaction: IdempotencyTransaction<Tx>;
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
 * The doors' flow on the caller's driver: `idempotent(db, ...)` inside `options.transaction`,
 * so the claim (a row of that transaction, as idempotent-db documents), the handler's writes and
 * the stored answer commit together, and the answer is handed back only once they have. As on
 * the postgres.js path, a 5xx answer rolls the writes back (the key with them) and is returned,
 * and a throw rolls everything back and is rethrown: the key stays free for a retry.
 */
export async function idempotentInTransaction<Tx>(
  request: IdempotentRequest,
  options: WithIdempotencyTransactionOptions<Tx>,
  handler: TransactionHandler<Tx>,
): Promise<Response> {
  try {
    return await options.transaction(async (tx, db) => {
      const response = await idempotent(db, request, () => handler(tx), options);
      if (response.status >= 500) throw new ServerErrorAnswer(response);
      return response;
    });
  } catch (error) {
    if (error instanceof ServerErrorAnswer) return error.response;
    throw error;
  }
}
