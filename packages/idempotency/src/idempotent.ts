import type postgres from 'postgres';
import { STORE_ANSWER_OR_RAISE, storeAnswerValues } from './db-store';
import { expiry, lostLease, runIdempotentFlow } from './flow';
import { type IdempotencyOptions, resolveIdempotencyOptions } from './options';
import { postgresIdempotencyStore } from './postgres-store';
import type { IdempotentRequest } from './request';
import { type HandlerResult, storeResponse, toResponse } from './response';

/**
 * A handler that does its business writes through `tx`, the transaction the answer is stored in:
 * a postgres.js transaction, or your own driver's through a door's `transaction` option.
 */
export type TransactionHandler<Tx = postgres.TransactionSql> = (
  tx: Tx,
) => HandlerResult | Promise<HandlerResult>;

/** Carries a 5xx answer out of the transaction so its writes roll back. */
class ServerErrorAnswer extends Error {
  readonly response: Response;
  constructor(response: Response) {
    super('handler answered 5xx');
    this.response = response;
  }
}

const DIVISION_BY_ZERO = '22012';

function isDivisionByZero(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === DIVISION_BY_ZERO;
}

/**
 * The primary API: runs `handler` at most once per (account, key) and commits its business
 * writes and the stored answer in ONE transaction, so a crash can leave neither "charged but
 * no record" nor "record but not charged".
 *
 * Phases (after Brandur Leach's "Implementing Stripe-like Idempotency Keys in Postgres"):
 * 1. Claim, one autocommit statement: insert the key with a lease, or read who holds it.
 *    Committed at once, so every process sees "in progress" (409) and its fingerprint (422).
 * 2. One transaction: `handler(tx)`, then the UPDATE that stores the answer only while this
 *    attempt's token still holds the key. If the lease was taken over meanwhile, the UPDATE
 *    touches no row, `1 / count(*)` raises, and the whole transaction (business writes
 *    included) rolls back. The UPDATE is pipelined with COMMIT: no extra round trip.
 *    Meanwhile the lease is renewed every third of `leaseMs` from the pool.
 * 3. On a 5xx answer or a throw the transaction rolls back and the key is released; a thrown
 *    4xx `ProblemError` rolls the writes back and is stored as the answer. If the process
 *    dies, PostgreSQL rolls the transaction back and the lease frees the key.
 *
 * Without a key (and none required) `handler` still runs in one transaction, and a 5xx rolls
 * it back. Pass the pool, never a transaction: the claim must commit on its own.
 *
 * @throws ProblemError 400 `idempotency_key_required` / `validation_failed`, 409
 * `idempotency_key_in_use` (also when the lease was lost mid-flight), 422
 * `idempotency_key_reused`; whatever `handler` throws.
 * @example
 * ```ts
 * const response = await idempotent(
 *   sql,
 *   { key: req.headers.get('Idempotency-Key'), account, method: 'POST', path: '/v1/payments', body, required: true },
 *   async (tx) => {
 *     const [payment] = await tx`insert into payments ${tx(row)} returning *`;
 *     return { status: 201, headers: { Location: `/v1/payments/${payment.id}` }, body: payment };
 *   },
 * );
 * ```
 */
export async function idempotent(
  sql: postgres.Sql,
  request: IdempotentRequest,
  handler: TransactionHandler,
  options: IdempotencyOptions = {},
): Promise<Response> {
  const resolved = resolveIdempotencyOptions(options);
  return runIdempotentFlow(postgresIdempotencyStore(sql), request, resolved, {
    async unkeyed() {
      try {
        return await sql.begin(async (tx) => {
          const response = toResponse(await handler(tx));
          if (response.status >= 500) throw new ServerErrorAnswer(response);
          return response;
        });
      } catch (error) {
        if (error instanceof ServerErrorAnswer) return error.response;
        throw error;
      }
    },
    async keyed(held) {
      let stored: Promise<unknown> | undefined;
      // The storing statement's own failure, told apart from a handler's division by zero.
      let storeFailure: unknown;
      let response: Response;
      try {
        response = await sql.begin(async (tx) => {
          const answer = toResponse(await handler(tx));
          if (answer.status >= 500) throw new ServerErrorAnswer(answer);
          const copy = await storeResponse(answer, resolved.storedHeaders);
          // The statement every driver runs (dbIdempotencyStore's), sent now and not awaited,
          // so postgres.js pipelines COMMIT right behind it. If it raises, PostgreSQL answers
          // that COMMIT with ROLLBACK, and awaiting it below tells.
          const values = storeAnswerValues(held, copy, expiry(resolved)) as postgres.ParameterOrJSON<never>[];
          stored = tx.unsafe(STORE_ANSWER_OR_RAISE, values, { prepare: true }).execute();
          stored.catch((error: unknown) => {
            storeFailure = error;
          });
          return answer;
        });
      } catch (error) {
        // A 5xx rolled its writes back; the core releases the key.
        if (error instanceof ServerErrorAnswer) return { kind: 'answer', response: error.response };
        if (error !== undefined && error === storeFailure && isDivisionByZero(error)) {
          throw lostLease(error, resolved.retryAfterSeconds);
        }
        throw error;
      }
      try {
        await stored;
      } catch (error) {
        if (isDivisionByZero(error)) throw lostLease(error, resolved.retryAfterSeconds);
        // The transaction aborted, so nothing committed; the core releases the unanswered claim.
        throw error;
      }
      return { kind: 'stored', response };
    },
  });
}
