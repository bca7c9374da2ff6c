export {
  type AddressCap,
  type AddressCapOptions,
  type AddressedSocket,
  addressKey,
  type ConnectionServer,
  limitConnectionsPerAddress,
} from './address-cap';
export {
  type BackpressureOptions,
  type BackpressureRequest,
  type BackpressureResponse,
  type BackpressureSocket,
  backpressureDefaults,
  withBackpressure,
} from './backpressure';
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
export {
  answerHttpEdges,
  answerProblem,
  type EdgeIncoming,
  type EdgeOptions,
  type EdgeRequest,
  type EdgeResponse,
  type EdgeServer,
  type EdgeSocket,
  refuseAtTheEdge,
} from './edges';
export {
  type JsonBodyGuard,
  type JsonBodyOptions,
  jsonBodyGuard,
  jsonBodyReader,
  type ParsedJson,
  readLimited,
} from './json-body';
export { missingBody, noFieldsBody, noFieldsProblem } from './no-fields';
export { nulProblem } from './nul';
export { newRequestId, opaqueId } from './opaque-id';
export {
  type RequestIdOptions,
  requestIdSettings,
  type WithRequestIdOptions,
  withRequestId,
} from './request-id';
export { jsonShapeIssue, type ShapeIssue, type ShapeLimits, type WideObject } from './shape';
export { type TextIssue, toWellFormedText, type WellFormedResult, wellFormedJson } from './text';
export { textProblem } from './text-problem';
