import { defineProblems, type ProblemCatalogue } from '@holdfast/problem-details';

/** The problem types of a `sort` parameter refused against its allowlist. */
export const sortDefinitions = {
  invalid_sort: { status: 400, title: 'Invalid sort' },
  too_many_sort_keys: { status: 400, title: 'Too many sort keys' },
} as const;

/**
 * The catalogue of {@link sortDefinitions} (type URIs under `https://holdfast.dev/problems/`).
 * A service listing its whole catalogue spreads `sortProblems.definitions` into it.
 *
 * @example
 * ```ts
 * const problem = sortProblems.create('invalid_sort', { detail: 'Unknown sort key "color".' });
 * ```
 */
export const sortProblems: ProblemCatalogue<typeof sortDefinitions> = defineProblems(sortDefinitions);
