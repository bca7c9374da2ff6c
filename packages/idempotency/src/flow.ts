import type { ProblemError } from '@holdfast/problem-details';
import { keepLease } from './lease';
import type { ResolvedIdempotencyOptions } from './options';
import { idempotencyProblems } from './problems';
import { answerExisting, type IdempotentRequest, prepareClaim } from './request';
import { isClientProblem, problemToResponse, storeResponse } from './response';
import type { HeldKey, IdempotencyStore } from './store';

/**
 * What the work done under a held key ended with: an answer the core stores (2xx, 4xx) or
 * releases the key for (5xx), or an answer the work already stored itself (the atomic flow
 * stores it in the business transaction).
 */
export type KeyedOutcome =
  | { readonly kind: 'answer'; readonly response: Response }
  | { readonly kind: 'stored'; readonly response: Response };

/** The two ways an entry point runs its handler: with no key, and while holding one. */
export interface IdempotentWork<R> {
  /** No key, and none required: the handler simply runs. */
  readonly unkeyed: () => Promise<R>;
  /** The handler runs while this attempt holds the key (its lease renewed meanwhile). */
  readonly keyed: (held: HeldKey) => Promise<KeyedOutcome>;
}

// Problems that say another attempt took the key over: the key is not ours to store or release.
const lostLeases = new WeakSet<ProblemError>();

/**
 * 409 `idempotency_key_in_use` for an attempt whose lease ran out and was taken over; the
 * core passes it on without storing it or touching the key.
 */
export function lostLease(cause: unknown, retryAfter: number): ProblemError {
  const error = idempotencyProblems.create('idempotency_key_in_use', {
    detail: 'The lease on this Idempotency-Key ran out and another attempt took it over; retry later.',
    retryAfter,
    cause,
  });
  lostLeases.add(error);
  return error;
}

/**
 * The one idempotency flow every entry point runs: read the key (400), claim it, answer a key
 * already held (422, 409 or the replay), else run the work while renewing the lease, then
 * store its answer (a 2xx or 4xx, a thrown 4xx `ProblemError` included) or release the key
 * (a 5xx or a crash) so the client can retry at once.
 */
export async function runIdempotentFlow<R>(
  store: IdempotencyStore,
  request: IdempotentRequest,
  options: ResolvedIdempotencyOptions,
  work: IdempotentWork<R>,
): Promise<R | Response> {
  const claim = await prepareClaim(request, options);
  if (claim === undefined) return work.unkeyed();
  const result = await store.claim(claim);
  if (result.outcome !== 'claimed') return answerExisting(result, claim, options, request.requestId);
  const held: HeldKey = { account: claim.account, key: claim.key, token: claim.token };
  let outcome: KeyedOutcome;
  // Renewed from the store (the pool, for PostgreSQL), so other processes see it.
  const stopLease = keepLease(store, held, options);
  try {
    outcome = await work.keyed(held);
  } catch (error) {
    stopLease();
    if (isClientProblem(error) && lostLeases.has(error)) throw error;
    if (isClientProblem(error)) {
      const stored = await storeResponse(
        problemToResponse(error, request.path, request.typeBase),
        options.storedHeaders,
      );
      await store.complete(held, stored, expiry(options));
    } else {
      await store.release(held).catch(() => {});
    }
    throw error;
  }
  stopLease();
  const { response } = outcome;
  if (outcome.kind === 'stored') return response;
  if (response.status >= 500) {
    await store.release(held);
    return response;
  }
  // A lost lease (renewals failed and another attempt took the key over) leaves the answer
  // unstored; the client still gets it.
  await store.complete(held, await storeResponse(response, options.storedHeaders), expiry(options));
  return response;
}

/** When a stored answer stops being replayed. */
export function expiry(options: Pick<ResolvedIdempotencyOptions, 'now' | 'retentionMs'>): Date {
  return new Date(options.now() + options.retentionMs);
}
