import { qualify } from '@holdfast/db/migrate';
import { wakeChannelSql } from '../wake';

/**
 * The outbox's three data-modifying CTEs (`holdfast_event_seq`, `holdfast_event`,
 * `holdfast_event_fan`): the resource's next sequence, the event carrying it, one delivery per
 * active subscribed endpoint whose filter (if any) the event matches. Written once: `enqueue`
 * runs them alone, `eventWrites` hands them to a caller's own statement with its placeholders
 * numbered after the caller's. `p(n)` is the placeholder of the n-th value (1 to 8, see
 * {@link fanOutValues}); `when` is trusted SQL that gates every write.
 *
 * A delivery of an ordered endpoint (`ordering = 'per-resource'`) joins its resource's line: its
 * place is taken after the sequence row's lock, so places follow the sequence. Behind an
 * unfinished delivery of its line it waits undue until the ordering trigger (migration 003)
 * makes it due as the one before it finishes. The line is read in the queue and its head locked
 * in its own partition (`holdfast_line_unfinished`, migration 016), so the statement plans and
 * locks no history partition but today's; the `for key share` lock reads the newest version of
 * the line's head, so a head finished after this statement's snapshot counts as finished (one
 * finishing before this commits is left to the workers' repair of waiting lines).
 */
function fanOut(t: Tables, p: (n: number) => string, when: string): string {
  return `holdfast_event_seq as (
  insert into ${t.sequences} (resource_id, sequence)
  select ${p(1)}::text, 1 where ${when}
  on conflict (resource_id) do update set sequence = ${t.sequences}.sequence + 1
  returning sequence
),
holdfast_event as (
  insert into ${t.events} (id, account_id, type, resource_id, sequence, payload, created_at)
  select ${p(2)}::text, ${p(3)}::text, ${p(4)}::text, ${p(1)}::text, s.sequence,
         ${p(5)}::text || s.sequence::text || ${p(6)}::text, ${p(7)}::timestamptz
  from holdfast_event_seq s
  returning id, payload
),
holdfast_event_fan as (
  insert into ${t.deliveries}
    (id, account_id, event_id, endpoint_id, event_type, status, next_attempt_at, created_at, updated_at,
     ordering_key, ordering_pos)
  select ${deliveryId(`${p(7)}::timestamptz`)}, ${p(3)}::text, ev.id, e.id, ${p(4)}::text,
         'pending',
         case when e.ordering <> 'per-resource' then ${p(7)}::timestamptz
              when ${t.lineUnfinished}(e.id, ${p(1)}::text) then null
              else ${p(7)}::timestamptz end,
         ${p(7)}::timestamptz, ${p(7)}::timestamptz,
         case when e.ordering = 'per-resource' then ${p(1)}::text end,
         case when e.ordering = 'per-resource' then nextval(${t.orderSequence}) end
  from holdfast_event ev, ${t.endpoints} e
  where e.account_id = ${p(3)}::text and e.status = 'active' and e.deleted_at is null
    and (cardinality(e.event_types) = 0 or ${p(4)}::text = any(e.event_types) or '*' = any(e.event_types))
    and (e.filter is null or (${p(8)}::boolean and ${t.filterMatch}(e.filter, ev.payload::jsonb)))
  returning pg_notify(${t.channel}, '')
)`;
}

/**
 * A new delivery id made in SQL: `dlv_` and a UUIDv7 in hex, its first 48 bits the Unix
 * milliseconds of `at` (the delivery's `created_at`), so a read by id finds its partition
 * ({@link createdAtOf}); the rest of a random UUID but its version, now 7.
 */
function deliveryId(at: string): string {
  return `'dlv_' || lpad(to_hex((extract(epoch from ${at}) * 1000)::bigint), 12, '0') || '7'
         || substr(replace(gen_random_uuid()::text, '-', ''), 14)`;
}

/**
 * Bounds `column` (a delivery's `created_at`) by what the delivery id `id` says of it, so the
 * planner reads one partition; an id that says nothing (made before ids carried their time)
 * leaves it unbounded.
 */
function createdAtOf(t: Tables, column: string, id: string): string {
  return `${column} >= coalesce(${t.createdAt}(${id}), '-infinity')
      and ${column} <= coalesce(${t.createdAt}(${id}), 'infinity')`;
}

/** The package's objects in one schema, as statements name them. */
interface Tables {
  readonly endpoints: string;
  readonly pacing: string;
  readonly releases: string;
  readonly sequences: string;
  readonly events: string;
  readonly deliveries: string;
  readonly attempts: string;
  readonly notifications: string;
  /** Endpoints' turns in lease rounds (migration 009). */
  readonly turns: string;
  /** Unfinished deliveries with their leases (migration 009). */
  readonly queue: string;
  /** `nextval`'s argument: the ordering sequence's name as a string literal. */
  readonly orderSequence: string;
  readonly filterMatch: string;
  /** Whether a line has an unfinished delivery, which it locks (migration 016). */
  readonly lineUnfinished: string;
  /** When a delivery id says it was made (migration 007), null for ids that do not say. */
  readonly createdAt: string;
  readonly historyPrepare: string;
  readonly historyExpire: string;
  readonly historyPartitions: string;
  /**
   * The workers' wake channel, one per schema (`holdfast_due.<schema>`, the connection's current
   * schema when none is named), so deployments sharing a database in separate schemas do not
   * wake each other. Notifications are sent at commit, identical ones once per transaction.
   */
  readonly channel: string;
}

const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

function tables(schema: string | undefined): Tables {
  const q = qualify(schema);
  return {
    endpoints: q('holdfast_webhook_endpoints'),
    pacing: q('holdfast_endpoint_pacing'),
    releases: q('holdfast_endpoint_releases'),
    sequences: q('holdfast_resource_sequences'),
    events: q('holdfast_events'),
    deliveries: q('holdfast_deliveries'),
    attempts: q('holdfast_delivery_attempts'),
    notifications: q('holdfast_notifications'),
    turns: q('holdfast_endpoint_queue'),
    queue: q('holdfast_delivery_queue'),
    orderSequence: literal(q('holdfast_delivery_order')),
    filterMatch: q('holdfast_filter_match'),
    lineUnfinished: q('holdfast_line_unfinished'),
    createdAt: q('holdfast_delivery_created_at'),
    historyPrepare: q('holdfast_history_prepare'),
    historyExpire: q('holdfast_history_expire'),
    historyPartitions: q('holdfast_history_partitions'),
    channel: wakeChannelSql(schema),
  };
}

/** An endpoint's row with its pacing row's limit and ceiling, from `source` aliased `e`. */
const ENDPOINT_COLUMNS = 'e.*, p.concurrency_limit, p.concurrency_max';

/**
 * Every statement of the sender's management side (endpoints, the outbox, replay, recovery,
 * stats, history partitions, notifications), each written once as text with `$n` values, for
 * the tables of one schema. Values go as text, numbers, booleans or array literals, each cast in the
 * statement, so every driver sends the same text.
 */
function build(schema: string | undefined): StoreStatements {
  const t = tables(schema);
  const withPacing = (source: string) => `
    select ${ENDPOINT_COLUMNS} from ${source} e left join ${t.pacing} p on p.endpoint_id = e.id`;
  return {
    /** The CTEs of {@link fanOut} with their values numbered from `offset + 1`, gated by `when`. */
    fanOut: (offset: number, when: string) => fanOut(t, (n) => `$${n + offset}`, when),

    /** {@link fanOutValues} as `$1..$8`; returns the sequence handed out, as text. */
    enqueue: `with ${fanOut(t, (n) => `$${n}`, 'true')}
select sequence::text as sequence from holdfast_event_seq`,

    /**
     * $1 endpoint, $2 account, $3 event id, $4 type, $5 resource, $6 payload, $7 at, $8 delivery
     * id: a test event and its one delivery, no fan-out, no sequence.
     */
    testEvent: `
    with ep as (
      select id from ${t.endpoints} where id = $1::text and account_id = $2::text and deleted_at is null
    ),
    ev as (
      insert into ${t.events} (id, account_id, type, resource_id, sequence, payload, created_at)
      select $3::text, $2::text, $4::text, $5::text, 0, $6::text, $7::timestamptz from ep
      returning id
    ),
    d as (
      insert into ${t.deliveries}
        (id, account_id, event_id, endpoint_id, event_type, status, next_attempt_at, created_at, updated_at)
      select $8::text, $2::text, ev.id, ep.id, $4::text, 'pending', $7::timestamptz, $7::timestamptz, $7::timestamptz
      from ev, ep
      returning *
    )
    select d.*, pg_notify(${t.channel}, '') as woken from d`,

    /**
     * $1 id, $2 account, $3 url, $4 description, $5 event types, $6 secret, $7 max per second,
     * $8 scheme, $9 public key, $10 filter (JSON text), $11 ordering, $12 at, $13 the ceiling,
     * $14 the initial limit: the endpoint and its pacing row.
     */
    createEndpoint: `
    with e as (
      insert into ${t.endpoints}
        (id, account_id, url, description, event_types, secret, max_per_second,
         signature_scheme, public_key, filter, ordering, created_at, updated_at)
      values ($1::text, $2::text, $3::text, $4::text, $5::text[], $6::text, $7::int,
              $8::text, $9::text, $10::text::jsonb, $11::text, $12::timestamptz, $12::timestamptz)
      returning *
    ),
    p as (
      insert into ${t.pacing} (endpoint_id, concurrency_max, concurrency_limit)
      select id, $13::int, least($14::int, coalesce($13::int, $14::int)) from e
      returning concurrency_limit, concurrency_max
    )
    select ${ENDPOINT_COLUMNS} from e, p`,

    /** $1 id, $2 account. */
    getEndpoint: `${withPacing(t.endpoints)}
    where e.id = $1::text and e.account_id = $2::text and e.deleted_at is null`,

    /** $1 endpoint ids. */
    endpointConcurrency: `
    select endpoint_id, concurrency_limit, concurrency_max from ${t.pacing}
    where endpoint_id = any($1::text[])`,

    /**
     * $1 id, $2 account, $3 url (null: kept), $4 event types (null: kept), $5 whether the
     * description changes, $6 the description, $7 status (null: kept), $8 whether the rate
     * changes, $9 the rate, $10 whether the filter changes, $11 the filter (JSON text), $12
     * ordering (null: kept), $13 at. Re-enabling clears the failure streak; any status change
     * clears the reason it was disabled. A status change moves the endpoint's turn in lease rounds
     * (enabled: first in the next round, whatever the workers' clock; disabled: never).
     */
    updateEndpoint: `
    with u as (
      update ${t.endpoints} set
        url = coalesce($3::text, url),
        event_types = coalesce($4::text[], event_types),
        description = case when $5::boolean then $6::text else description end,
        status = coalesce($7::text, status),
        max_per_second = case when $8::boolean then $9::int else max_per_second end,
        filter = case when $10::boolean then $11::text::jsonb else filter end,
        ordering = coalesce($12::text, ordering),
        failing_since = case when $7::text = 'active' then null else failing_since end,
        disable_warned_at = case when $7::text = 'active' then null else disable_warned_at end,
        disabled_reason = case when $7::text is not null then null else disabled_reason end,
        updated_at = $13::timestamptz
      where id = $1::text and account_id = $2::text and deleted_at is null
      returning *
    ),
    turned as (
      update ${t.turns} r set turn = case when $7::text = 'active' then '-infinity'::timestamptz
                                          else 'infinity'::timestamptz end
      from u where r.endpoint_id = u.id and $7::text is not null
    )
    ${withPacing('u')}`,

    /** $1 id, $2 account, $3 at. Its queued deliveries are never leased: lease rounds pass it by. */
    deleteEndpoint: `
    with d as (
      update ${t.endpoints} set deleted_at = $3::timestamptz, status = 'disabled', updated_at = $3::timestamptz
      where id = $1::text and account_id = $2::text and deleted_at is null
      returning id
    ),
    turned as (
      update ${t.turns} r set turn = 'infinity' from d where r.endpoint_id = d.id
    )
    select id from d`,

    /**
     * $1 id, $2 account, $3 until when the old key signs, $4 a new v1a key, $5 its public key,
     * $6 a new v1 secret, $7 at: the endpoint keeps the key of its own scheme.
     */
    rotateSecret: `
    with u as (
      update ${t.endpoints} set
        previous_secret = secret,
        previous_secret_expires_at = $3::timestamptz,
        secret = case when signature_scheme = 'v1a' then $4::text else $6::text end,
        public_key = case when signature_scheme = 'v1a' then $5::text end,
        updated_at = $7::timestamptz
      where id = $1::text and account_id = $2::text and deleted_at is null
      returning *
    )
    ${withPacing('u')}`,

    /** $1 id, $2 account. */
    getEvent: `select payload from ${t.events} where id = $1::text and account_id = $2::text`,

    /** $1 id, $2 account. */
    getDelivery: `select * from ${t.deliveries} d
    where d.id = $1::text and d.account_id = $2::text and ${createdAtOf(t, 'd.created_at', '$1::text')}`,

    /**
     * $1 delivery, $2 account: one row per attempt, oldest first, or one row without an attempt
     * (`id` null) when the delivery has none; no row when there is no such delivery.
     */
    listAttempts: `
    select a.* from ${t.deliveries} d
    left join ${t.attempts} a on a.delivery_id = d.id and a.account_id = d.account_id
      -- Not the partitions older than the delivery: its attempts come after it.
      and a.created_at >= d.created_at
    where d.id = $1::text and d.account_id = $2::text and ${createdAtOf(t, 'd.created_at', '$1::text')}
    order by a.created_at, a.id`,

    /**
     * $1 id, $2 account, $3 at, $4 the release stripe. `old` locks the delivery row, then its
     * queue row (where its lease is; the lock order of migration 009): a lease statement leasing
     * it meanwhile is waited for, and the lease it wrote is what `in_flight` reads. A running attempt (a live lease) leaves it alone; an expired lease is dropped with
     * its place in the endpoint's in-flight count. A finished delivery of an ordered endpoint
     * takes a new place at the back of its line, under the resource's sequence row lock, as a new
     * event's delivery does, and waits behind an unfinished one of its line.
     */
    replayDelivery: `
    with locked as (
      select id, created_at, endpoint_id, lease_expires_at, ordering_key, status
      from ${t.deliveries} d
      where id = $1::text and account_id = $2::text and ${createdAtOf(t, 'd.created_at', '$1::text')}
      for update
    ),
    old as (
      select d.id, d.created_at, d.endpoint_id, l.lease_expires_at is not null as leased,
             coalesce(l.lease_expires_at > $3::timestamptz, false) as in_flight, l.lease_expires_at,
             d.ordering_key, d.status in ('succeeded', 'dead') as finished
      from locked d
      left join lateral (
        select q.lease_expires_at from ${t.queue} q where q.delivery_id = d.id for update
      ) q on true
      -- A lease written by hand on the delivery row counts too.
      cross join lateral (select coalesce(q.lease_expires_at, d.lease_expires_at) as lease_expires_at) l
    ),
    line as (
      select r.resource_id from ${t.sequences} r, old
      where r.resource_id = old.ordering_key and old.finished and not old.in_flight
      for update of r
    ),
    released as (
      insert into ${t.releases} (endpoint_id, stripe, released)
      select endpoint_id, $4::int, 1 from old where old.leased and not old.in_flight
      on conflict (endpoint_id, stripe) do update set released = ${t.releases}.released + 1
    ),
    replayed as (
      update ${t.deliveries} d set
        status = 'pending', retry_base = d.attempt_count,
        next_attempt_at = case when old.finished and old.ordering_key is not null
            and ${t.lineUnfinished}(old.endpoint_id, old.ordering_key) then null else $3::timestamptz end,
        lease_owner = null, lease_expires_at = null, updated_at = $3::timestamptz,
        ordering_pos = case when old.finished and old.ordering_key is not null then coalesce(
          (select nextval(${t.orderSequence}) from line), nextval(${t.orderSequence}))
          else d.ordering_pos end
      from old where d.id = old.id and d.created_at = old.created_at and not old.in_flight
        and ${createdAtOf(t, 'd.created_at', '$1::text')}
      returning d.*
    )
    select old.in_flight as replay_in_flight,
           (extract(epoch from old.lease_expires_at) * 1000)::float8 as replay_lease_expires_ms, replayed.*
    from old left join replayed on true`,

    /** $1 endpoint, $2 account: whether the account has that endpoint. */
    endpointExists: `
    select id from ${t.endpoints} where id = $1::text and account_id = $2::text and deleted_at is null`,

    /**
     * $1 account, $2 endpoint, $3 event types (null: every type), $4 since, $5 until, $6 at most,
     * $7 at. Dead deliveries of an ordered endpoint join the back of their resource's line in
     * their old order, their new places taken under the resources' sequence row locks (as a
     * replay's); the first of a line is due only when nothing of its line is unfinished. A
     * delivery whose attempt is running (a retry, leased) is left to it.
     */
    recover: `
    with found as (
      select d.id, d.created_at, d.ordering_key, d.ordering_pos, d.status = 'dead' and d.ordering_key is not null as rejoins
      from ${t.deliveries} d
      where d.account_id = $1::text and d.endpoint_id = $2::text
        and d.status in ('dead', 'failed')
        and d.lease_expires_at is null
        and not exists (
          select 1 from ${t.queue} q where q.delivery_id = d.id and q.lease_expires_at is not null)
        and ($3::text[] is null or d.event_type = any($3::text[]))
        and d.created_at >= $4::timestamptz and d.created_at < $5::timestamptz
      order by d.created_at, d.id
      limit $6::int
      for update of d
    ),
    -- The failed ones' queue rows, locked after their delivery rows (the lock order of migration
    -- 009) and read as they are now: one a worker leased since this statement's snapshot is left
    -- to its attempt.
    free as (
      select q.delivery_id from ${t.queue} q
      where q.delivery_id = any(array(select found.id from found)) and q.lease_expires_at is null
      order by q.delivery_id
      for update of q
    ),
    lines as (
      select r.resource_id from ${t.sequences} r
      where r.resource_id in (select ordering_key from found where rejoins)
      order by r.resource_id
      for update of r
    ),
    places as (
      select f.id, nextval(${t.orderSequence}) as pos,
             row_number() over (partition by f.ordering_key order by f.ordering_pos) = 1
               and not ${t.lineUnfinished}($2::text, f.ordering_key) as due
      from found f
      -- The count (an init plan, run before any row) takes the locks before the first place.
      where f.rejoins and (select count(*) from lines) >= 0
    )
    update ${t.deliveries} d set
      status = 'pending', retry_base = d.attempt_count,
      next_attempt_at = case when places.due is false then null else $7::timestamptz end,
      lease_owner = null, lease_expires_at = null, updated_at = $7::timestamptz,
      ordering_pos = coalesce(places.pos, d.ordering_pos)
    from found left join places on places.id = found.id
    where d.id = found.id and d.created_at = found.created_at
      and d.created_at >= $4::timestamptz and d.created_at < $5::timestamptz
      and (d.status = 'dead' or d.id in (select free.delivery_id from free))
    returning d.id`,

    /**
     * $1 from, $2 bucket size (ms), $3 endpoint, $4 account, $5 to, $6 event types (null: every
     * type): attempts per bucket by outcome, with latency percentiles. An attempt is `dead` when
     * it is the last of a delivery that is dead.
     */
    stats: `
    select floor(extract(epoch from (a.created_at - $1::timestamptz)) * 1000 / $2::int)::int as i,
      count(*) filter (where a.outcome = 'succeeded')::int as succeeded,
      count(*) filter (where a.outcome = 'failed')::int as failed,
      count(*) filter (where a.outcome = 'dead')::int as dead,
      percentile_cont(0.5) within group (order by a.latency_ms)::float8 as p50,
      percentile_cont(0.95) within group (order by a.latency_ms)::float8 as p95
    from (
      select a.created_at, a.latency_ms,
        case
          when a.status between 200 and 299 then 'succeeded'
          when d.status = 'dead' and not exists (
            select 1 from ${t.attempts} later
            where later.delivery_id = a.delivery_id and later.created_at >= a.created_at
              and (later.created_at, later.id) > (a.created_at, a.id)
          ) then 'dead'
          else 'failed'
        end as outcome
      from ${t.attempts} a
      -- One probe per attempt, into the partition its delivery id names.
      cross join lateral (
        select d.status, d.event_type from ${t.deliveries} d
        where d.id = a.delivery_id and ${createdAtOf(t, 'd.created_at', 'a.delivery_id')}
        limit 1
      ) d
      where a.endpoint_id = $3::text and a.account_id = $4::text
        and a.created_at >= $1::timestamptz and a.created_at < $5::timestamptz
        and ($6::text[] is null or d.event_type = any($6::text[]))
    ) a
    group by 1`,

    /**
     * $1 history table, $2 from, $3 to, $4 days: partitions of $4 days covering [$2, $3), after
     * moving rows out of the table's default partition (migration 008); the partitions made
     * (`created`), or one row `busy` when a lock was not had in time.
     */
    historyEnsure: `select partition, action from ${t.historyPrepare}($1::text, $2::timestamptz, $3::timestamptz, $4::int)`,

    /** $1 history table, $2 cutoff: its partitions wholly before it, dropped or kept (migration 008). */
    historyExpire: `select partition, action from ${t.historyExpire}($1::text, $2::timestamptz)`,

    /** The history tables' partitions with their bounds (epoch ms; null for a default). */
    historyPartitions: `
    select parent, partition, (extract(epoch from from_at) * 1000)::float8 as from_ms,
           (extract(epoch from to_at) * 1000)::float8 as to_ms
    from ${t.historyPartitions}()`,

    /** $1 type, $2 message, $3 at, $4 ids, $5 accounts (one notification each). */
    notifyAccounts: `
    insert into ${t.notifications} (id, account_id, type, endpoint_id, message, disable_at, created_at)
    select n.id, n.account_id, $1::text, null, $2::text, null, $3::timestamptz
    from unnest($4::text[], $5::text[]) as n(id, account_id)
    returning *`,
  };
}

/** The statements of {@link build}: each key one statement's text (see its comment there). */
export interface StoreStatements {
  /** The outbox CTEs with their values numbered from `offset + 1`, gated by `when`. */
  readonly fanOut: (offset: number, when: string) => string;
  readonly enqueue: string;
  readonly testEvent: string;
  readonly createEndpoint: string;
  readonly getEndpoint: string;
  readonly endpointConcurrency: string;
  readonly updateEndpoint: string;
  readonly deleteEndpoint: string;
  readonly rotateSecret: string;
  readonly getEvent: string;
  readonly getDelivery: string;
  readonly listAttempts: string;
  readonly replayDelivery: string;
  readonly endpointExists: string;
  readonly recover: string;
  readonly stats: string;
  readonly historyEnsure: string;
  readonly historyExpire: string;
  readonly historyPartitions: string;
  readonly notifyAccounts: string;
}

const built = new Map<string | undefined, StoreStatements>();

/**
 * The management statements for the tables in `schema` (absent: unqualified names, found by the
 * connection's `search_path`), built once per schema.
 */
export function storeStatements(schema?: string): StoreStatements {
  let statements = built.get(schema);
  if (!statements) {
    statements = build(schema);
    built.set(schema, statements);
  }
  return statements;
}
