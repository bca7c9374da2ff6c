import { opaqueId } from '@holdfast/ids';
import { jsonbCanHold } from './filter';
import { storeStatements } from './sql/store';

/** An event to record, for `enqueueEvent` and {@link eventWrites}. */
export interface EventInput {
  account: string;
  /** `subscription.created`, `order.refunded`, ... */
  type: string;
  /**
   * The resource's id (`data.object.id`): `sequence` rises monotonically per resource, and it is
   * the event's ordering key (an endpoint with `ordering: 'per-resource'` gets the deliveries of
   * one resource one at a time, in this order).
   */
  resourceId: string;
  /** The resource after the change; it should carry `updatedAt`. */
  object: Record<string, unknown>;
}

/**
 * The values of the outbox CTEs (`$1` resource, `$2` event id, `$3` account, `$4` type, `$5` and
 * `$6` the payload around its sequence, `$7` created at, `$8` whether filters can read the
 * payload), and the event's id and `createdAt`.
 */
export function fanOutValues(
  input: EventInput,
  now: number,
): { readonly values: unknown[]; readonly id: string; readonly createdAt: string } {
  const id = opaqueId('evt');
  const createdAt = new Date(now).toISOString();
  // The payload is the exact bytes sent, and it carries the sequence the database hands out in
  // the same statement: the JSON is built with a placeholder and spliced around it in SQL. The
  // placeholder's first occurrence is ours: it precedes `data`, and the strings before it
  // (id, type, createdAt) are JSON strings, whose quotes are escaped.
  const text = JSON.stringify({
    id,
    type: input.type,
    createdAt,
    sequence: 0,
    data: { object: input.object },
  });
  const at = text.indexOf('"sequence":0') + '"sequence":'.length;
  return {
    values: [
      input.resourceId,
      id,
      input.account,
      input.type,
      text.slice(0, at),
      text.slice(at + 1),
      createdAt,
      jsonbCanHold(text),
    ],
    id,
    createdAt,
  };
}

/** What {@link eventWrites} returns: the CTEs to put in a statement, their values, and the event. */
export interface EventWrites {
  /**
   * Three comma-separated data-modifying CTEs, `holdfast_event_seq`, `holdfast_event` and
   * `holdfast_event_fan`, for the caller's `with` list: the resource's next sequence, the event
   * carrying it, one delivery per active subscribed endpoint whose filter (if any) the event
   * matches (which wakes the delivery workers at commit). One event per statement (the CTE
   * names are fixed). Their placeholders are numbered from `offset + 1`.
   */
  readonly ctes: string;
  /** The CTEs' values: append them to the statement's own `offset` values. */
  readonly values: readonly unknown[];
  /** The event's id, as stored and sent (`Webhook-Id` of its deliveries). */
  readonly id: string;
  /** The event's `createdAt` (ISO 8601), as stored and sent. */
  readonly createdAt: string;
}

/**
 * `enqueueEvent`'s outbox as CTEs of the caller's own statement, so a business write and its
 * event commit in one statement (one round trip, one commit) instead of a transaction. The CTEs
 * are the very text `enqueueEvent` runs, their placeholders numbered after the caller's
 * `offset` values. `when` (trusted SQL from code, which may use the caller's placeholders) gates
 * every write: the CTEs write nothing unless it holds, for instance
 * `exists (select from my_claim)`; leave it out to always write. `schema` is where the sender's
 * tables are (as given to `migrations`).
 *
 * @example
 * ```ts
 * const event = eventWrites({ account: 'acct_1', type: 'order.created', resourceId: 'ord_1', object: order }, { offset: 1 });
 * await db.query(`with created as (insert into orders (id) values ($1)), ${event.ctes} select 1`, ['ord_1', ...event.values]);
 * ```
 */
export function eventWrites(
  input: EventInput,
  options: {
    readonly offset?: number;
    readonly when?: string;
    readonly schema?: string;
    readonly now?: () => number;
  } = {},
): EventWrites {
  const offset = options.offset ?? 0;
  if (!Number.isInteger(offset) || offset < 0)
    throw new RangeError('offset must be an integer of at least 0');
  const { values, id, createdAt } = fanOutValues(input, (options.now ?? Date.now)());
  const ctes = storeStatements(options.schema).fanOut(offset, options.when ?? 'true');
  return { ctes, values, id, createdAt };
}
