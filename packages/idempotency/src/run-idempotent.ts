import { keepLease } from './lease';
import { type IdempotencyOptions, resolveIdempotencyOptions } from './options';
import { answerExisting, type IdempotentRequest, prepareClaim } from './request';
import {
  type HandlerResult,
  isClientProblem,
  problemToResponse,
  storeResponse,
  toResponse,
} from './response';
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
 * const store = new MemoryIdempotencyStore();
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
  const resolved = resolveIdempotencyOptions(options);
  const claim = await prepareClaim(request, resolved);
  if (claim === undefined) return toResponse(await handler());
  const result = await store.claim(claim);
  if (result.outcome !== 'claimed') return answerExisting(result, claim, resolved, request.requestId);
  const held = { account: claim.account, key: claim.key, token: claim.token };
  let response: Response;
  const stopLease = keepLease(store, held, resolved);
  try {
    response = toResponse(await handler());
  } catch (error) {
    stopLease();
    if (isClientProblem(error)) {
      const stored = await storeResponse(problemToResponse(error, request.path), resolved.storedHeaders);
      await store.complete(held, stored, expiry(resolved));
    } else {
      await store.release(held).catch(() => {});
    }
    throw error;
  }
  stopLease();
  if (response.status >= 500) {
    await store.release(held);
    return response;
  }
  // A lost lease (renewals failed and another attempt took the key over) leaves the answer
  // unstored; the client still gets it.
  await store.complete(held, await storeResponse(response, resolved.storedHeaders), expiry(resolved));
  return response;
}

function expiry(options: { retentionMs: number; now: () => Date }): Date {
  return new Date(options.now().getTime() + options.retentionMs);
}
