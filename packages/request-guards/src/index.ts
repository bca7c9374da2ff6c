export {
  answerClientErrors,
  type ClientError,
  type ClientErrorOptions,
  type ClientErrorServer,
  type ClientErrorSocket,
  httpFramingDefinitions,
  httpFramingProblems,
  type RequestOnSocket,
  type ResponseInFlight,
} from './client-error';
export { nestedDeeperThan } from './depth';
export { missingBody, noFieldsBody, noFieldsProblem } from './no-fields';
export { newRequestId, opaqueId } from './opaque-id';
export { type TextIssue, toWellFormedText, type WellFormedResult, wellFormedJson } from './text';
export { textProblem } from './text-problem';
