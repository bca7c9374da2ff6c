export {
  type AttemptMetricOutcome,
  attemptOutcome,
  type DeliveryMetrics,
  type DeliveryMetricsOptions,
  deliveryMetrics,
} from './prometheus-metrics';
export { type QueueDepth, queueDepth } from './queue-depth';
