export { type JsonObject, narrowProblemCodes } from './openapi-codes';
export { type HookResult, validationHook } from './openapi-hook';
export { type ProblemResponse, problemResponsesFor, problemSchema } from './openapi-responses';
export { strictQueries } from './openapi-strict-query';
