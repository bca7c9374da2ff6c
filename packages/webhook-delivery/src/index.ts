export { classifyAttempt, type Outcome, parseRetryAfter } from './classify';
export { deliveryDefinitions, deliveryProblems } from './problems';
export { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule, retryDelay } from './schedule';
export {
  checkDestination,
  type DestinationCheck,
  type DestinationOptions,
  forbiddenAddress,
  pinnedAgent,
  type Resolver,
  systemResolver,
} from './ssrf';
