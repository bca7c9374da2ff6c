export {
  CUT_MARK,
  clipEcho,
  clipPointer,
  formatCount,
  MAX_ECHO_LENGTH,
  MAX_ENTRY_DETAIL_LENGTH,
  MAX_ERRORS,
  pointerToken,
} from './bounds';
export {
  type CatalogueOptions,
  type CreateArgs,
  DEFAULT_TYPE_BASE,
  defineProblems,
  type HoldfastProblemCode,
  holdfastDefinitions,
  holdfastProblems,
  type ProblemCatalogue,
  type ProblemDefinition,
  type ProblemDefinitions,
  problem,
  type RetryStatus,
} from './catalogue';
export { fromUnknown } from './from-unknown';
export {
  allowedBy,
  checkTypeBase,
  notFoundOrNotAllowed,
  type ProblemResponseOptions,
  problemContextOf,
  problemForStatus,
  ROUTE_METHODS,
  toProblemResponse,
} from './http';
export {
  type FieldError,
  formatRetryAfter,
  isProblemError,
  PROBLEM_MEDIA_TYPE,
  type ProblemContext,
  type ProblemDocument,
  ProblemError,
  type ProblemInit,
  problemType,
  type RetryAfter,
} from './problem-error';
export { type FromZodOptions, fromZodError, type ZodLikeError, type ZodLikeIssue } from './zod';
