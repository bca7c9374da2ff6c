export { classifyAttempt, type Outcome, parseRetryAfter } from './classify';
export {
  checkEgress,
  EgressError,
  type EgressOptions,
  egressSourceRanges,
} from './egress';
export {
  assertFilter,
  checkFilter,
  type EventFilter,
  FILTER_LIMITS,
  type FilterIssue,
} from './filter';
export { isCongestion } from './pacing';
export { deliveryDefinitions, deliveryProblems } from './problems';
export { RECOVER_MAX, type RecoverInput, recoverDeliveries } from './recover';
export { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule, retryDelay } from './schedule';
export {
  type EndpointScope,
  endpointScope,
  endpointTenants,
  holdsDeliveryData,
  lockedEndpointCount,
  queuedEventTypes,
  type TenantQueryOptions,
} from './sql/tenants';
export {
  checkDestination,
  type DestinationCheck,
  type DestinationOptions,
  forbiddenAddress,
  pinnedAgent,
  type Resolver,
  systemResolver,
} from './ssrf';
export { type EndpointStats, endpointStats, type StatsBucket, type StatsWindow } from './stats';
