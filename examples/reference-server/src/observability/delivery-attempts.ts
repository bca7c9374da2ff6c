import type { AttemptInfo } from '@holdfast/webhook-delivery';
import { attemptOutcome } from '@holdfast/webhook-delivery/prometheus';
import type { Metrics } from './metrics';
import { recordSpan } from './tracing';

/**
 * The delivery worker's `onAttempt` hook: counts each attempt by outcome with its latency, and
 * records it as a client span with its real start and end. Labels are outcomes only (never the
 * endpoint or delivery id); the span carries the ids, where cardinality costs nothing.
 *
 * @example
 * ```ts
 * createDeliveryWorker({ db, onAttempt: observeAttempt(metrics) });
 * ```
 */
export function observeAttempt(
  metrics: Metrics | undefined,
  now: () => number = Date.now,
): (info: AttemptInfo) => void {
  return (info) => {
    const outcome = attemptOutcome(info.outcome);
    metrics?.delivery.onAttempt(info);
    recordSpan(
      'webhook delivery attempt',
      new Date(now()),
      info.latencyMs,
      {
        'holdfast.delivery.id': info.deliveryId,
        'holdfast.endpoint.id': info.endpointId,
        'holdfast.event.type': info.eventType,
        'holdfast.delivery.outcome': outcome,
        ...(info.status === null ? {} : { 'http.response.status_code': info.status }),
      },
      outcome !== 'succeeded',
    );
  };
}
