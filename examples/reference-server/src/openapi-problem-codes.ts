import { type ContractProblemCode, contractDefinitions } from './problems';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

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

const CODES = Object.keys(contractDefinitions) as ContractProblemCode[];
const codesOf = (status: number) => CODES.filter((code) => contractDefinitions[code].status === status);

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
 * The `code` values a problem response of an operation can carry, as a closed set: the codes
 * its traits imply, with the business codes its description names (`invalid_state_transition`,
 * `refund_exceeds_amount`, ...); a status whose codes neither names gets every contract code of
 * that status. A generated client can then switch over `code` exhaustively.
 *
 * @example
 * ```ts
 * problemCodes(409, 'invalid_state_transition: shipped.', traits); // ['invalid_state_transition']
 * ```
 */
export function problemCodes(status: number, description: string, traits: OperationTraits): string[] {
  const named = codesOf(status).filter((code) => new RegExp(`\\b${code}\\b`).test(description));
  const codes = new Set<string>([...codesByTraits(status, traits), ...(status === 400 ? [] : named)]);
  if (codes.size === 0) for (const code of codesOf(status)) codes.add(code);
  return CODES.filter((code) => codes.has(code));
}

/**
 * Replaces the `Problem` schema of each problem+json response in `responses` by `Problem` with
 * `code` narrowed to {@link problemCodes}.
 */
export function narrowProblemCodes(responses: JsonObject, traits: OperationTraits): void {
  for (const [status, response] of Object.entries(responses)) {
    if (!isObject(response) || !isObject(response.content)) continue;
    const media = response.content['application/problem+json'];
    if (!isObject(media)) continue;
    const description = typeof response.description === 'string' ? response.description : '';
    media.schema = {
      allOf: [
        { $ref: '#/components/schemas/Problem' },
        {
          type: 'object',
          properties: { code: { type: 'string', enum: problemCodes(Number(status), description, traits) } },
        },
      ],
    };
  }
}
