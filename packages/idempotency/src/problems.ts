import { defineProblems, type ProblemCatalogue } from '@holdfast/problem-details';

/**
 * The problem types of `Idempotency-Key` (IETF draft "The Idempotency-Key HTTP Header Field",
 * https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/): a key missing
 * where required, a key whose first request still runs, a key reused with another request.
 */
export const idempotencyDefinitions = {
  idempotency_key_required: { status: 400, title: 'Idempotency-Key header required' },
  idempotency_key_in_use: { status: 409, title: 'Idempotency key in use' },
  idempotency_key_reused: { status: 422, title: 'Idempotency key reused with a different request' },
} as const;

/**
 * The catalogue of {@link idempotencyDefinitions} (type URIs under
 * `https://holdfast.dev/problems/`). A service listing its whole catalogue spreads
 * `idempotencyProblems.definitions` into it.
 *
 * @example
 * ```ts
 * idempotencyProblems.create('idempotency_key_in_use', { retryAfter: 1 }).status; // 409
 * ```
 */
export const idempotencyProblems: ProblemCatalogue<typeof idempotencyDefinitions> =
  defineProblems(idempotencyDefinitions);
