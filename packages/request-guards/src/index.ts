export { type AddressCap, limitConnectionsPerAddress } from './address-cap';
export { withBackpressure } from './backpressure';
export { answerClientErrors, httpFramingProblems } from './client-error';
export { type JsonBodyOptions, jsonBodyReader } from './json-body';
export { missingBody, noFieldsBody, noFieldsProblem } from './no-fields';
export { nulProblem } from './nul';
export { opaqueId } from './opaque-id';
export { type RequestIdOptions, withRequestId } from './request-id';
