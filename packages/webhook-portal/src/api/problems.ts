import {
  type CreateArgs,
  defineProblems,
  holdfastProblems,
  type ProblemCatalogue,
  type ProblemError,
} from '@holdfast/problem-details';
import { deliveryDefinitions } from '@holdfast/webhook-delivery';

/**
 * The management API's own problem types, beside the shared HTTP ones and
 * `@holdfast/webhook-delivery`'s: a host listing its catalogue spreads these in.
 */
export const managementDefinitions = {
  endpoint_limit_reached: { status: 409, title: 'Webhook endpoint limit reached' },
} as const;

const definitions: typeof holdfastProblems.definitions &
  typeof deliveryDefinitions &
  typeof managementDefinitions = {
  ...holdfastProblems.definitions,
  ...deliveryDefinitions,
  ...managementDefinitions,
};

const catalogue: ProblemCatalogue<typeof definitions> = defineProblems(definitions);

/** Builds a problem of the management API's catalogue (429 and 503 require `retryAfter`). */
export function problem<C extends keyof typeof definitions>(
  code: C,
  ...args: CreateArgs<(typeof definitions)[C]>
): ProblemError<C> {
  return catalogue.create(code, ...args);
}
