import { defineProblems, type ProblemCatalogue } from '@holdfast/problem-details';

/** The problem type of a cursor that is malformed, altered, expired or bound to another list. */
export const cursorDefinitions = {
  invalid_cursor: { status: 400, title: 'Invalid cursor' },
} as const;

/**
 * The catalogue of {@link cursorDefinitions} (type URIs under `https://holdfast.dev/problems/`).
 * A service listing its whole catalogue spreads `cursorProblems.definitions` into it.
 *
 * @example
 * ```ts
 * const problem = cursorProblems.create('invalid_cursor', { detail: 'The cursor has expired.' });
 * ```
 */
export const cursorProblems: ProblemCatalogue<typeof cursorDefinitions> = defineProblems(cursorDefinitions);
