export { clipEcho, clipPointer, pointerToken } from './bounds';
export {
  type CreateArgs,
  defineProblems,
  holdfastProblems,
  type ProblemCatalogue,
  type ProblemDefinitions,
  problem,
} from './catalogue';
export { fromUnknown } from './from-unknown';
export { toProblemResponse } from './http';
export {
  type FieldError,
  isProblemError,
  PROBLEM_MEDIA_TYPE,
  type ProblemContext,
  type ProblemDocument,
  ProblemError,
} from './problem-error';
export { fromZodError } from './zod';
