import { type ProblemError, problem } from '@holdfast/problem-details';
import type { TextIssue } from './text';

/** 400 `validation_failed` for a body breaking the text rule, naming the field. */
export function textProblem(issue: TextIssue): ProblemError {
  const nul = issue.reason === 'nul';
  return problem('validation_failed', {
    detail: nul
      ? 'The request body contains a NUL character (U+0000), which is never valid here.'
      : `The request body has a "__proto__" key at ${issue.field}, which is never accepted.`,
    errors: [
      {
        field: issue.field,
        pointer: issue.pointer,
        code: nul ? 'invalid_characters' : 'forbidden_key',
        detail: nul ? 'Must not contain U+0000.' : 'A key named "__proto__" is not accepted.',
      },
    ],
  });
}
