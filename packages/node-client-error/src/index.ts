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
