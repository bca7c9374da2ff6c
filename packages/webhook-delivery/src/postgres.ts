export { type AccountsNotice, notifyAccounts } from './egress-notifications';
export {
  type AccountRef,
  createEndpoint,
  deleteEndpoint,
  type EndpointChanges,
  type EndpointInput,
  endpointConcurrency,
  getEndpoint,
  INITIAL_CONCURRENCY,
  ROTATION_OVERLAP_MS,
  rotateSecret,
  updateEndpoint,
} from './endpoints';
export type { EventFilter } from './filter';
export { migrations } from './migrations';
export {
  type EventInput,
  enqueueEvent,
  getDelivery,
  getEvent,
  listAttempts,
  replayDelivery,
  sendTestEvent,
  type TestEventInput,
} from './outbox';
export { type EventWrites, eventWrites } from './outbox-writes';
export { purgeDeliveryHistory } from './purge';
export { RECOVER_MAX, type RecoverInput, recoverDeliveries } from './recover';
export {
  type Delivery,
  type DeliveryAttempt,
  type DeliveryOrdering,
  type DeliveryStatus,
  type EndpointConcurrency,
  type Notification,
  toAttempt,
  toConcurrency,
  toDelivery,
  toEndpoint,
  toEvent,
  toNotification,
  type WebhookEndpoint,
  type WebhookEvent,
} from './rows';
export { type EndpointStats, endpointStats, type StatsBucket, type StatsWindow } from './stats';
export {
  type AttemptInfo,
  createDeliveryWorker,
  type DeliveryWorker,
  type DeliveryWorkerOptions,
  type Notifier,
} from './worker';
