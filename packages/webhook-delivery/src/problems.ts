import { defineProblems, type ProblemCatalogue } from '@holdfast/problem-details';

/**
 * The package's problem types: a webhook destination refused by the SSRF rules, and a replay of a
 * delivery whose attempt is still running (nothing is sent twice at once).
 */
export const deliveryDefinitions = {
  destination_url_forbidden: { status: 422, title: 'Destination URL forbidden' },
  delivery_in_flight: { status: 409, title: 'Delivery attempt in flight' },
} as const;

/**
 * The catalogue of {@link deliveryDefinitions} (type URIs under `https://holdfast.dev/problems/`).
 *
 * @example
 * ```ts
 * throw deliveryProblems.create('destination_url_forbidden', { detail: 'Loopback addresses are refused.' });
 * ```
 */
export const deliveryProblems: ProblemCatalogue<typeof deliveryDefinitions> =
  defineProblems(deliveryDefinitions);
