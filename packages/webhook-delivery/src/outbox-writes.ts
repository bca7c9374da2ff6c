import type postgres from 'postgres';
import type { ISql as Sql } from 'postgres';
import { jsonbCanHold } from './filter';
import { opaqueId } from './id';
import type { EventInput } from './outbox';
import { wakeChannel } from './wake';

/** What {@link eventWrites} returns: the CTEs to put in a statement, and the event they record. */
export interface EventWrites {
  /**
   * Three comma-separated data-modifying CTEs, `holdfast_event_seq`, `holdfast_event` and
   * `holdfast_event_fan`, for the caller's `with` list: the resource's next sequence, the
   * event carrying it, one delivery per active subscribed endpoint whose filter (if any) the
   * event matches (which notifies the workers, at commit, when there is one). One event per
   * statement (the CTE names are fixed). An endpoint with `ordering: 'per-resource'` gets its
   * delivery in the resource's line: its place is taken after the sequence row's lock, so places
   * follow the sequence.
   */
  readonly ctes: postgres.PendingQuery<postgres.Row[]>;
  /** The event's id, as stored and sent (`Webhook-Id` of its deliveries). */
  readonly id: string;
  /** The event's `createdAt` (ISO 8601), as stored and sent. */
  readonly createdAt: string;
}

/**
 * {@link enqueueEvent}'s outbox as CTEs of the caller's own statement, so a business write and
 * its event commit in one statement (one round trip, one commit) instead of a transaction.
 * `when` gates every write: the CTEs write nothing unless it holds (for instance
 * `exists (select from my_claim)`); leave it out to always write.
 *
 * @example
 * ```ts
 * const event = eventWrites(sql, { account: 'acct_1', type: 'order.created', resourceId: 'ord_1', object: order });
 * await sql`with created as (insert into orders (id) values ('ord_1')), ${event.ctes} select 1`;
 * ```
 */
export function eventWrites(
  sql: Sql,
  input: EventInput & { readonly when?: postgres.PendingQuery<postgres.Row[]> },
): EventWrites {
  const now = new Date((input.now ?? Date.now)());
  const id = opaqueId('evt');
  // The payload is the exact bytes sent, and it carries the sequence the database hands out in
  // this same statement: the JSON is built with a placeholder and spliced around it in SQL. The
  // placeholder's first occurrence is ours: it precedes `data`, and the strings before it
  // (id, type, createdAt) are JSON strings, whose quotes are escaped.
  const text = JSON.stringify({
    id,
    type: input.type,
    createdAt: now.toISOString(),
    sequence: 0,
    data: { object: input.object },
  });
  const at = text.indexOf('"sequence":0') + '"sequence":'.length;
  const when = input.when ?? sql`true`;
  const ctes = sql`
    holdfast_event_seq as (
      insert into holdfast_resource_sequences (resource_id, sequence)
      select ${input.resourceId}::text, 1 where ${when}
      on conflict (resource_id) do update set sequence = holdfast_resource_sequences.sequence + 1
      returning sequence
    ),
    holdfast_event as (
      insert into holdfast_events (id, account_id, type, resource_id, sequence, payload, created_at)
      select ${id}, ${input.account}, ${input.type}, ${input.resourceId}, s.sequence,
             ${text.slice(0, at)} || s.sequence::text || ${text.slice(at + 1)}, ${now}
      from holdfast_event_seq s
      returning id, payload
    ),
    holdfast_event_fan as (
      insert into holdfast_deliveries
        (id, account_id, event_id, endpoint_id, event_type, status, next_attempt_at, created_at, updated_at,
         ordering_key, ordering_pos)
      select 'dlv_' || replace(gen_random_uuid()::text, '-', ''), ${input.account}, ev.id, e.id, ${input.type},
             'pending',
             -- Behind an unfinished delivery of its line, a delivery waits undue until the trigger
             -- of migration 003 makes it due as the one before it finishes. The lock reads the
             -- newest version of the line's head, so a head finished after this statement's
             -- snapshot counts as finished (one finishing before this commits is left to the
             -- workers' repair, resumeWaitingLines).
             case when e.ordering <> 'per-resource' then ${now}::timestamptz
                  when exists (
                    select 1 from holdfast_deliveries x
                    where x.endpoint_id = e.id and x.ordering_key = ${input.resourceId}::text
                      and x.status in ('pending', 'failed')
                    for key share) then null
                  else ${now}::timestamptz end,
             ${now}, ${now},
             case when e.ordering = 'per-resource' then ${input.resourceId}::text end,
             case when e.ordering = 'per-resource' then nextval('holdfast_delivery_order') end
      from holdfast_event ev, holdfast_webhook_endpoints e
      where e.account_id = ${input.account} and e.status = 'active' and e.deleted_at is null
        and (cardinality(e.event_types) = 0 or ${input.type} = any(e.event_types) or '*' = any(e.event_types))
        and (e.filter is null or (${jsonbCanHold(text)}::boolean and holdfast_filter_match(e.filter, ev.payload::jsonb)))
      returning pg_notify(${wakeChannel(sql)}, '')
    )`;
  return { ctes, id, createdAt: now.toISOString() };
}

/**
 * The outbox write of one event as one statement of text with `$1..$8`, for any driver (see
 * {@link enqueueEvent}): the same three writes as {@link eventWrites}, each value cast so every
 * driver passes the same text, and the sequence read back as text. The fan-out notifies the
 * delivery workers of this schema (delivered at commit, once per transaction).
 */
export const ENQUEUE_EVENT = `
with holdfast_event_seq as (
  insert into holdfast_resource_sequences (resource_id, sequence)
  select $1::text, 1
  on conflict (resource_id) do update set sequence = holdfast_resource_sequences.sequence + 1
  returning sequence
),
holdfast_event as (
  insert into holdfast_events (id, account_id, type, resource_id, sequence, payload, created_at)
  select $2::text, $3::text, $4::text, $1::text, s.sequence,
         $5::text || s.sequence::text || $6::text, $7::timestamptz
  from holdfast_event_seq s
  returning id, payload
),
holdfast_event_fan as (
  insert into holdfast_deliveries
    (id, account_id, event_id, endpoint_id, event_type, status, next_attempt_at, created_at, updated_at,
     ordering_key, ordering_pos)
  select 'dlv_' || replace(gen_random_uuid()::text, '-', ''), $3::text, ev.id, e.id, $4::text,
         'pending',
         case when e.ordering <> 'per-resource' then $7::timestamptz
              when exists (
                select 1 from holdfast_deliveries x
                where x.endpoint_id = e.id and x.ordering_key = $1::text and x.status in ('pending', 'failed')
                for key share) then null
              else $7::timestamptz end,
         $7::timestamptz, $7::timestamptz,
         case when e.ordering = 'per-resource' then $1::text end,
         case when e.ordering = 'per-resource' then nextval('holdfast_delivery_order') end
  from holdfast_event ev, holdfast_webhook_endpoints e
  where e.account_id = $3::text and e.status = 'active' and e.deleted_at is null
    and (cardinality(e.event_types) = 0 or $4::text = any(e.event_types) or '*' = any(e.event_types))
    and (e.filter is null or ($8::boolean and holdfast_filter_match(e.filter, ev.payload::jsonb)))
  returning pg_notify(left('holdfast_due.' || current_schema(), 63), '')
)
select sequence::text as sequence from holdfast_event_seq`;

/** {@link ENQUEUE_EVENT}'s values for `input`, and the event's id and `createdAt`. */
export function enqueueEventValues(input: EventInput): {
  readonly values: readonly unknown[];
  readonly id: string;
  readonly createdAt: string;
} {
  const now = new Date((input.now ?? Date.now)());
  const id = opaqueId('evt');
  const createdAt = now.toISOString();
  // As in eventWrites: the payload is built around a placeholder the sequence replaces in SQL.
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
