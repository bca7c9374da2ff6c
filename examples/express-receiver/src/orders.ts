/**
 * What the sender's order events carry, checked here: the signature says who sent an event,
 * not that its shape is what this service expects.
 */
export interface OrderEvent {
  readonly type: 'order.created' | 'order.updated';
  /** The sender's per-resource sequence, when it sends one. */
  readonly sequence: number | null;
  readonly order: { readonly id: string; readonly status: string; readonly total: number };
}

/**
 * The event types this service processes; the inbox marks any other `ignored`.
 *
 * @example
 * ```ts
 * await inbox.process(postgresTransaction(sql), { types: ORDER_EVENT_TYPES, handle });
 * ```
 */
export const ORDER_EVENT_TYPES: readonly OrderEvent['type'][] = ['order.created', 'order.updated'];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The order event in `payload`, or `undefined` when it is not one this service understands.
 *
 * @example
 * ```ts
 * parseOrderEvent({ type: 'order.created', data: { object: { id: 'ord_1', status: 'pending', total: 100 } } });
 * ```
 */
export function parseOrderEvent(payload: unknown): OrderEvent | undefined {
  if (!isRecord(payload)) return undefined;
  const { type, sequence, data } = payload;
  if (type !== 'order.created' && type !== 'order.updated') return undefined;
  if (!isRecord(data) || !isRecord(data.object)) return undefined;
  const { id, status, total } = data.object;
  if (typeof id !== 'string' || id.length === 0 || id.length > 100) return undefined;
  if (typeof status !== 'string' || status.length > 40) return undefined;
  if (typeof total !== 'number' || !Number.isSafeInteger(total)) return undefined;
  return {
    type,
    sequence: typeof sequence === 'number' && Number.isSafeInteger(sequence) ? sequence : null,
    order: { id, status, total },
  };
}
