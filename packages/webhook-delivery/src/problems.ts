import { defineProblems, type ProblemCatalogue } from '@holdfast/problem-details';

/** The problem type of a webhook destination refused by the SSRF rules. */
export const deliveryDefinitions = {
  destination_url_forbidden: { status: 422, title: 'Destination URL forbidden' },
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
