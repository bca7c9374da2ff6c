import { runIdempotentFlow } from './flow';
import { type IdempotencyOptions, resolveIdempotencyOptions } from './options';
import type { IdempotentRequest } from './request';
import { type HandlerResult, toResponse } from './response';
import type { IdempotencyStore } from './store';

/**
 * The plain flow, for handlers with no database of their own (a call to another service, a
 * file): claim the key, run `handler` once, store its 2xx or 4xx answer (a thrown 4xx
 * `ProblemError` included), release the key on 5xx or a throw so the client can retry.
 * A repeat gets the stored answer with `Idempotent-Replayed: true` and runs nothing.
 *
 * Not atomic: if the process dies after the handler's effect and before the answer is stored,
 * the key is released after the lease and a retry runs again. When the handler writes to
 * PostgreSQL, use `idempotent()` from `@holdfast/idempotency/postgres` instead.
 *
 * @throws ProblemError 400 `idempotency_key_required` / `validation_failed`, 409
 * `idempotency_key_in_use`, 422 `idempotency_key_reused`; whatever `handler` throws.
 * @example
 * ```ts
 * const store = memoryIdempotencyStore();
 * const response = await runIdempotent(
 *   store,
 *   { key: request.headers.get('Idempotency-Key'), account: 'acct_1', method: 'POST', path: '/v1/emails', body },
 *   async () => ({ status: 202, body: await sendEmail(body) }),
 * );
 * ```
 */
export async function runIdempotent(
  store: IdempotencyStore,
  request: IdempotentRequest,
  handler: () => HandlerResult | Promise<HandlerResult>,
  options: IdempotencyOptions = {},
): Promise<Response> {
  const run = async () => toResponse(await handler());
  return runIdempotentFlow(store, request, resolveIdempotencyOptions(options), {
    unkeyed: run,
    keyed: async () => ({ kind: 'answer', response: await run() }),
  });
}
