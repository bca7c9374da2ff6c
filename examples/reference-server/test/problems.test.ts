import { describe, expect, it } from 'vitest';
import { contractDefinitions, PROBLEM_TYPE_BASE, problem } from '../src/problems';

// CONTRACT section 2: the codes and statuses every Holdfast service answers with.
const contractCodes: ReadonlyArray<[string, number]> = [
  ['invalid_json', 400],
  ['validation_failed', 400],
  ['unknown_field', 400],
  ['invalid_sort', 400],
  ['too_many_sort_keys', 400],
  ['invalid_cursor', 400],
  ['idempotency_key_required', 400],
  ['webhook_timestamp_out_of_window', 400],
  ['unauthenticated', 401],
  ['webhook_signature_invalid', 401],
  ['forbidden', 403],
  // CONTRACT section 12: a receiver's allowed source ranges.
  ['webhook_source_forbidden', 403],
  ['not_found', 404],
  ['method_not_allowed', 405],
  ['invalid_state_transition', 409],
  ['version_conflict', 409],
  ['idempotency_key_in_use', 409],
  // CONTRACT section 11: the endpoint quota.
  ['endpoint_limit_reached', 409],
  // CONTRACT section 12: a replay of a delivery whose attempt is running.
  ['delivery_in_flight', 409],
  ['payload_too_large', 413],
  ['unsupported_media_type', 415],
  ['idempotency_key_reused', 422],
  ['unprocessable', 422],
  ['refund_exceeds_amount', 422],
  // A payment above what its order has left to pay (issue 28).
  ['payment_exceeds_total', 422],
  ['destination_url_forbidden', 422],
  ['rate_limited', 429],
  ['internal_error', 500],
  ['service_unavailable', 503],
];

describe('the contract catalogue, composed from the packages and the demo', () => {
  it.each(contractCodes)('declares %s as %i', (code, status) => {
    expect(Object.hasOwn(contractDefinitions, code)).toBe(true);
    expect(contractDefinitions[code as keyof typeof contractDefinitions].status).toBe(status);
  });

  it('declares nothing beyond the contract', () => {
    expect(Object.keys(contractDefinitions).sort()).toEqual(contractCodes.map(([code]) => code).sort());
  });

  it('renders every code under the one type base of the server', () => {
    for (const [code] of contractCodes) {
      if (code === 'rate_limited' || code === 'service_unavailable') continue;
      expect(problem(code as 'not_found').toJSON().type).toBe(`/problems/${code}`);
      const body = problem(code as 'not_found').toJSON({ typeBase: PROBLEM_TYPE_BASE });
      expect(body.type).toBe(`https://holdfast.dev/problems/${code}`);
    }
  });
});
