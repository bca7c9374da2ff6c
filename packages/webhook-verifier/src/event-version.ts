function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * An event's `sequence` when it is a usable one (a non-negative safe integer, or its digits), or
 * `null`: `@holdfast/webhook-delivery` numbers each resource's events, rising by one per change.
 *
 * @example
 * ```ts
 * eventSequence({ sequence: 7 }); // 7
 * eventSequence({ sequence: -1 }); // null
 * ```
 */
export function eventSequence(payload: unknown): number | null {
  const raw = record(payload)?.sequence;
  const sequence = typeof raw === 'string' && /^\d{1,15}$/.test(raw) ? Number(raw) : raw;
  return typeof sequence === 'number' && Number.isSafeInteger(sequence) && sequence >= 0 ? sequence : null;
}

/**
 * The resource an event is about and its version, for stale-event discard (`versions`):
 * `data.object.id`, and the `sequence` when the event has one, else `data.object.updatedAt`.
 * `undefined` when the payload carries no usable version: process it as a notification, with
 * nothing to compare. The payload is trusted only because its signature verified; its shape is
 * still checked.
 *
 * @example
 * ```ts
 * eventVersion({ sequence: 3, data: { object: { id: 'ord_1' } } }); // { resource: 'ord_1', version: 3 }
 * ```
 */
export function eventVersion(payload: unknown): { resource: string; version: number } | undefined {
  const object = record(record(record(payload)?.data)?.object);
  const resource = object?.id;
  if (typeof resource !== 'string' || resource.length === 0 || resource.length > 255) return undefined;
  const sequence = eventSequence(payload);
  if (sequence !== null) return { resource, version: sequence };
  const updated = typeof object?.updatedAt === 'string' ? Date.parse(object.updatedAt) : Number.NaN;
  return Number.isSafeInteger(updated) && updated >= 0 ? { resource, version: updated } : undefined;
}
