import { narrowProblemCodes } from '@holdfast/problem-details/openapi';
import type { JsonObject } from './json-value';
import { type ContractProblemCode, contractDefinitions } from './problems';

/** What an operation declares that decides which problem codes it can answer. */
export interface OperationTraits {
  readonly path: string;
  /** It takes a JSON body (`invalid_json` is possible). */
  readonly body: boolean;
  /** It is a cursor-paginated list (`invalid_sort`, `too_many_sort_keys`, `invalid_cursor`). */
  readonly list: boolean;
  /** It accepts `Idempotency-Key`: `idempotency_key_in_use` (409), `idempotency_key_reused` (422). */
  readonly idempotent: boolean;
  /** It requires `Idempotency-Key` (`idempotency_key_required`). */
  readonly idempotencyRequired: boolean;
}

/** The codes every operation of `traits` can answer with `status`, by the rules that send them. */
function codesByTraits(status: number, traits: OperationTraits): ContractProblemCode[] {
  const receiver = traits.path.startsWith('/hooks/');
  switch (status) {
    case 400:
      return [
        'validation_failed',
        'unknown_field',
        ...(traits.body || receiver ? (['invalid_json'] as const) : []),
        ...(traits.list ? (['invalid_sort', 'too_many_sort_keys', 'invalid_cursor'] as const) : []),
        ...(traits.idempotencyRequired ? (['idempotency_key_required'] as const) : []),
        ...(receiver ? (['webhook_timestamp_out_of_window'] as const) : []),
      ];
    case 401:
      return [receiver ? 'webhook_signature_invalid' : 'unauthenticated'];
    case 409:
      return traits.idempotent ? ['idempotency_key_in_use'] : [];
    case 422:
      return traits.idempotent ? ['idempotency_key_reused'] : [];
    default:
      return [];
  }
}

/**
 * Narrows the `code` of each problem response of an operation (`narrowProblemCodes` of
 * `@holdfast/problem-details/openapi`) to what its traits imply and its descriptions name; the
 * shared 400 description names every 400 code, so only the traits count there.
 *
 * @example
 * ```ts
 * narrowContractCodes(operation.responses, traitsOf(path, operation));
 * ```
 */
export function narrowContractCodes(responses: JsonObject, traits: OperationTraits): void {
  narrowProblemCodes(responses, {
    definitions: contractDefinitions,
    implied: (status) => codesByTraits(status, traits),
    named: (status) => status !== 400,
  });
}
