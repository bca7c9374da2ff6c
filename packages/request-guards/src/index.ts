export {
  type AddressCap,
  type AddressCapOptions,
  type AddressedSocket,
  addressKey,
  type ConnectionServer,
  limitConnectionsPerAddress,
} from './address-cap';
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
export { missingBody, noFieldsBody, noFieldsProblem } from './no-fields';
export { newRequestId, opaqueId } from './opaque-id';
export { jsonShapeIssue, type ShapeIssue, type ShapeLimits, type WideObject } from './shape';
export { type TextIssue, toWellFormedText, type WellFormedResult, wellFormedJson } from './text';
export { textProblem } from './text-problem';
