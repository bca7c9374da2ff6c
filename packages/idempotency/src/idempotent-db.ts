import type { Db } from '@holdfast/db';
import { dbIdempotencyStore } from './db-store';
import { runIdempotentFlow } from './flow';
import { type IdempotencyOptions, resolveIdempotencyOptions } from './options';
import type { IdempotentRequest } from './request';
import { type HandlerResult, toResponse } from './response';
import type { IdempotencyStore } from './store';

/**
 * Idempotency inside the caller's own transaction, on any driver: `tx` is that transaction as a
 * {@link Db} (`fromPg(client)`, `fromDrizzle(tx, sql)`, `fromKysely(trx)`, `fromPrisma(tx)`,
 * `fromPostgres(tx)`). The claim, the handler's business writes (through the caller's own
 * transaction), an outbox event (`enqueueEvent(tx, ...)`) and the stored answer commit together,
 * or, when anything throws and the caller's transaction rolls back, none of them does.
 *
 * The claim is a row of the uncommitted transaction, so a concurrent request with the same key
 * waits on it: when this transaction commits it replays the stored answer, when it rolls back
 * it claims the key itself. No lease is renewed (the row lock holds the key). A 5xx answer
 * releases the key in the transaction and is returned; throw instead to roll the writes back.
 * A stored answer from an earlier request is returned with `Idempotent-Replayed: true` and the
 * handler does not run.
 *
 * @throws ProblemError 400 `idempotency_key_required` / `validation_failed`, 409
 * `idempotency_key_in_use`, 422 `idempotency_key_reused`; whatever `handler` throws.
 * @example
 * ```ts
 * const response = await pool.connect().then(async (client) => {
 *   try {
 *     await client.query('begin');
 *     const answer = await idempotent(fromPg(client), request, async () => {
 *       await client.query('insert into orders (id) values ($1)', [id]);
 *       return { status: 201, body: { id } };
 *     });
 *     await client.query('commit');
 *     return answer;
 *   } catch (error) {
 *     await client.query('rollback');
 *     throw error;
 *   } finally {
 *     client.release();
 *   }
 * });
 * ```
 */
export async function idempotent(
  tx: Db,
  request: IdempotentRequest,
  handler: () => HandlerResult | Promise<HandlerResult>,
  options: IdempotencyOptions = {},
): Promise<Response> {
  const store: IdempotencyStore = { ...dbIdempotencyStore(tx), extend: async () => true };
  const run = async () => toResponse(await handler());
  return runIdempotentFlow(store, request, resolveIdempotencyOptions(options), {
    unkeyed: run,
    keyed: async () => ({ kind: 'answer', response: await run() }),
  });
}
