import { cursorDefinitions } from '@holdfast/cursor-pagination';
import { idempotencyDefinitions } from '@holdfast/idempotency';
import {
  type CreateArgs,
  defineProblems,
  holdfastProblems,
  type ProblemCatalogue,
  type ProblemError,
} from '@holdfast/problem-details';
import { sortDefinitions } from '@holdfast/sort-allowlist';
import { deliveryDefinitions } from '@holdfast/webhook-delivery';
import { managementDefinitions } from '@holdfast/webhook-portal';

/** The demo's own problem types: business rules of refunds and payments, and the inbound webhook checks. */
const demoDefinitions = {
  refund_exceeds_amount: { status: 422, title: 'Refund exceeds the refundable amount' },
  payment_exceeds_total: { status: 422, title: 'Payment exceeds the order total' },
  // The endpoint limit of the webhook management API, listed where the catalogue always had it.
  ...managementDefinitions,
  webhook_timestamp_out_of_window: { status: 400, title: 'Webhook timestamp outside the tolerance window' },
  webhook_signature_invalid: { status: 401, title: 'Webhook signature invalid' },
  webhook_source_forbidden: { status: 403, title: 'Webhook source forbidden' },
} as const;

/**
 * The contract's catalogue (CONTRACT section 2): the shared HTTP problems, each package's
 * own, and the demo's. Every code a /v1 or /hooks response may carry is here.
 */
export const contractDefinitions = {
  ...holdfastProblems.definitions,
  ...sortDefinitions,
  ...cursorDefinitions,
  ...idempotencyDefinitions,
  ...deliveryDefinitions,
  ...demoDefinitions,
} as const;

/** A code of the contract's catalogue. */
export type ContractProblemCode = keyof typeof contractDefinitions;

/**
 * This API's own base of problem `type` URIs (CONTRACT section 2: absolute, ending in the code,
 * documented at `/problems/{code}`). The packages' codes default to relative `/problems/<code>`;
 * `problemTypeBase()` in app.ts, `createHonoServer()` and the webhook receiver put them under it.
 */
export const PROBLEM_TYPE_BASE = 'https://holdfast.dev/problems/';

const contractProblems: ProblemCatalogue<typeof contractDefinitions> = defineProblems(contractDefinitions);

/** Builds a problem of the contract's catalogue (429 and 503 require `retryAfter`). */
export function problem<C extends ContractProblemCode>(
  code: C,
  ...args: CreateArgs<(typeof contractDefinitions)[C]>
): ProblemError<C> {
  return contractProblems.create(code, ...args);
}
