export { type RecoverInput, recoverDeliveries } from './recover';
export { schema } from './schema';
export { type EndpointStats, endpointStats, type StatsBucket, type StatsWindow, statsSchema } from './stats';
export {
  type AccountRef,
  createEndpoint,
  type Delivery,
  type DeliveryAttempt,
  type DeliveryStatus,
  deleteEndpoint,
  type EndpointChanges,
  type EndpointInput,
  type EventInput,
  enqueueEvent,
  getDelivery,
  getEndpoint,
  getEvent,
  listAttempts,
  type Notification,
  ROTATION_OVERLAP_MS,
  replayDelivery,
  rotateSecret,
  type Sql,
  toAttempt,
  toDelivery,
  toEndpoint,
  toEvent,
  toNotification,
  updateEndpoint,
  type WebhookEndpoint,
  type WebhookEvent,
} from './store';
export {
  createDeliveryWorker,
  type DeliveryWorker,
  type DeliveryWorkerOptions,
  type Notifier,
  purgeDeliveryHistory,
} from './worker';
