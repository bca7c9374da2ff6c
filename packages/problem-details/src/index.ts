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
export { escapeHtml, HTML_PAGE_CSP, htmlPage } from './html-page';
export { toProblemResponse } from './http';
export { errorLine, type LoggedError, loggableError } from './loggable-error';
export {
  type FieldError,
  isProblemError,
  PROBLEM_MEDIA_TYPE,
  type ProblemContext,
  type ProblemDocument,
  ProblemError,
} from './problem-error';
export {
  type JsonValue,
  type OpenApiDocument,
  type ReferenceOptions,
  type ReferenceSection,
  renderReference,
} from './reference';
export { fromZodError } from './zod';
