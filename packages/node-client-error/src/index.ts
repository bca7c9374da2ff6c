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
