export {
  type Json,
  type JsonObject,
  narrowProblemCodes,
  type ProblemCodesOptions,
  problemCodes,
} from './openapi-codes';
export {
  type HookContext,
  type HookResult,
  type ValidationHookOptions,
  validationHook,
} from './openapi-hook';
export {
  defaultProblemDescriptions,
  type ProblemResponse,
  type ProblemResponsesOptions,
  problemResponsesFor,
  problemSchema,
} from './openapi-responses';
export { strictQueries } from './openapi-strict-query';
