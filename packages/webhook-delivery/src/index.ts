// Everything that touches the database takes a `Db` of `@holdfast/db` (any driver's adapter),
// so this entry imports no driver.
export { checkEgress, EgressError, type EgressOptions, egressSourceRanges } from './egress';
export { notifyAccounts } from './egress-notifications';
export {
  type AccountRef,
  createEndpoint,
  deleteEndpoint,
  type EndpointChanges,
  type EndpointInput,
  endpointConcurrency,
  getEndpoint,
  rotateSecret,
  updateEndpoint,
} from './endpoints';
export { checkFilter, type EventFilter, FILTER_LIMITS, type FilterIssue } from './filter';
export {
  deliveryHistoryPartitions,
  type HistoryMaintenance,
  type HistoryOptions,
  type HistoryPartition,
  maintainDeliveryHistory,
} from './history';
export { migrations } from './migrations';
export type { DeliveryOptions, EndpointOptions } from './options';
export {
  enqueueEvent,
  getDelivery,
  getEvent,
  listAttempts,
  replayDelivery,
  sendTestEvent,
} from './outbox';
export { type EventInput, eventWrites } from './outbox-writes';
export { deliveryDefinitions, deliveryProblems } from './problems';
export { purgeDeliveryHistory } from './purge';
export { type RecoverInput, recoverDeliveries } from './recover';
export {
  type Delivery,
  type DeliveryAttempt,
  type Notification,
  toAttempt,
  toDelivery,
  toEndpoint,
  toEvent,
  toNotification,
  type WebhookEndpoint,
  type WebhookEvent,
} from './rows';
export { parseRetrySchedule } from './schedule';
export {
  type EndpointScope,
  endpointScope,
  endpointTenants,
  holdsDeliveryData,
  lockedEndpointCount,
  queuedEventTypes,
  type TenantQueryOptions,
} from './sql/tenants';
export { checkDestination, type DestinationOptions, type Resolver } from './ssrf';
export { type EndpointStats, endpointStats } from './stats';
export {
  type AttemptInfo,
  createDeliveryWorker,
  type DeliveryWorker,
  type DeliveryWorkerOptions,
  type Notifier,
} from './worker';
