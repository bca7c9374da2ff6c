-- The work still to do, in small tables of its own, so a lease round reads about what it leases
-- whatever the backlog and the number of endpoints with work, and the history tables (events,
-- deliveries, attempts, partitioned by time) are appended to, read by id and dropped by age.
--
-- `holdfast_delivery_queue`: one row per unfinished delivery (pending or failed) with what the
-- lease chooses by and returns: its endpoint, event (and `created_at`, which finds the event's
-- partition), when it is due, its place in an ordered line, and its lease, which lives here:
-- leasing, renewing and releasing write this small table, never a delivery row.
-- `holdfast_endpoint_queue`: one turn per endpoint, made with the endpoint. Rounds visit
-- endpoints in (`turn`, `shuffle`) order among those whose turn has come: a served endpoint goes
-- to the back (its turn becomes the round's time, `shuffle` a new draw), so the endpoints waiting
-- longest come first and ties fall randomly. An endpoint with nothing to lease is moved later by
-- the workers' periodic repair (`holdfast_queue_settle`): to when its first delivery can be
-- leased, or to `infinity`.
-- `holdfast_endpoint_wakes`: a write that makes a delivery leasable before its endpoint's turn
-- appends a wake here (a plain insert: no key, nothing to wait for); the next lease round moves
-- those turns earlier (`holdfast_queue_wakes`) and deletes the wakes.
--
-- The queue rows are kept by triggers on `holdfast_deliveries`: whatever writes a delivery (the
-- fan-out, outcomes, replay, recovery, the ordering trigger, an operator's UPDATE) writes its
-- queue row from it. A lease written on a delivery row by hand is copied to the queue row; a
-- write that changes a delivery's state (its status, attempt count or `updated_at`) ends any
-- lease; any other write keeps the queue row's lease.
--
-- Locks, in one order, and never a stronger lock on a row a transaction already holds a weaker
-- one on (two such writers would each wait for the other):
--   1. the delivery row (an UPDATE, or `for update` / `for no key update` first);
--   2. its queue row, only ever after its delivery row (the trigger, or `for update` after it);
--      statements that lock queue rows alone (renew, release) lock nothing after them but a
--      release stripe and, like every writer, a turn row in `for key share`;
--   3. the endpoint's turn row, which writers only ever lock `for key share` (checking that the
--      turn has come, so the repair cannot move it later until they commit) and never update:
--      `for key share` does not conflict with another writer's, nor with the rounds' and wakes'
--      updates of the turn (which change no key), only with the repair's `for update`;
-- Lease rounds, wakes and the repair take every lock with `skip locked`: they never wait, so no
-- cycle of waits can pass through them.
create table holdfast_delivery_queue (
  delivery_id text primary key,
  endpoint_id text not null,
  account_id text not null,
  event_id text not null,
  event_type text not null,
  attempt_count integer not null,
  retry_base integer not null,
  next_attempt_at timestamptz(3),
  lease_owner text,
  lease_expires_at timestamptz(3),
  ordering_key text,
  ordering_pos bigint,
  created_at timestamptz(3) not null
) with (fillfactor = 70);
-- Due unleased deliveries of one endpoint in lease order; leased ones by when their lease ends.
create index holdfast_delivery_queue_due
  on holdfast_delivery_queue (endpoint_id, next_attempt_at, delivery_id)
  where lease_expires_at is null and next_attempt_at is not null;
create index holdfast_delivery_queue_leased
  on holdfast_delivery_queue (endpoint_id, lease_expires_at) where lease_expires_at is not null;
-- A line's head with one probe, and at most one leased delivery per line.
create index holdfast_delivery_queue_line
  on holdfast_delivery_queue (endpoint_id, ordering_key, ordering_pos) where ordering_key is not null;
create unique index holdfast_delivery_queue_line_in_flight
  on holdfast_delivery_queue (endpoint_id, ordering_key)
  where ordering_key is not null and lease_expires_at is not null;

create table holdfast_endpoint_queue (
  endpoint_id text primary key references holdfast_webhook_endpoints (id) on delete cascade,
  account_id text not null,
  turn timestamptz not null,
  shuffle real not null
) with (fillfactor = 50);
create index holdfast_endpoint_queue_turn on holdfast_endpoint_queue (turn, shuffle);

create table holdfast_endpoint_wakes (
  endpoint_id text not null,
  at timestamptz not null
);
create index holdfast_endpoint_wakes_endpoint on holdfast_endpoint_wakes (endpoint_id);

-- Every endpoint has its turn from the start, so no writer ever inserts one (two writers
-- inserting two new turns in opposite orders would wait for each other).
create function holdfast_endpoint_turn_made() returns trigger
language plpgsql volatile
set search_path from current
as $fn$
begin
  insert into holdfast_endpoint_queue (endpoint_id, account_id, turn, shuffle)
  values (new.id, new.account_id, '-infinity', random())
  on conflict (endpoint_id) do nothing;
  return null;
end
$fn$;
create trigger holdfast_webhook_endpoints_turn
  after insert on holdfast_webhook_endpoints
  for each row execute function holdfast_endpoint_turn_made();
insert into holdfast_endpoint_queue (endpoint_id, account_id, turn, shuffle)
select id, account_id, '-infinity', random() from holdfast_webhook_endpoints;

-- When a delivery can next be leased: its due time, or when its lease ends; null: waiting.
create function holdfast_leasable_at(p_next timestamptz, p_lease timestamptz)
returns timestamptz
language sql immutable parallel safe
as $fn$
  select case when p_lease is null then p_next else greatest(p_lease, p_next) end
$fn$;

-- Makes `p_endpoint` looked at by rounds no later than `p_at`, without waiting for anyone and
-- without writing its turn: when the turn has come by `p_at`, a `for key share` lock keeps the
-- repair from moving it later until this transaction ends; otherwise a wake is appended, which
-- the next round applies.
create function holdfast_queue_wake(p_endpoint text, p_at timestamptz)
returns void
language plpgsql volatile
set search_path from current
as $fn$
begin
  perform 1 from holdfast_endpoint_queue r where r.endpoint_id = p_endpoint and r.turn <= p_at for key share;
  if not found then
    insert into holdfast_endpoint_wakes (endpoint_id, at) values (p_endpoint, p_at);
  end if;
end
$fn$;

create function holdfast_delivery_queued() returns trigger
language plpgsql volatile
set search_path from current
as $fn$
declare
  q holdfast_delivery_queue%rowtype;
  owner text;
  until timestamptz;
  was timestamptz;
  now_at timestamptz;
begin
  if tg_op = 'DELETE' then
    delete from holdfast_delivery_queue where delivery_id = old.id;
    return null;
  end if;
  if new.status not in ('pending', 'failed') then
    delete from holdfast_delivery_queue where delivery_id = new.id;
    return null;
  end if;
  -- The queue row as it is now, locked (its delivery row is already: the order above).
  select * into q from holdfast_delivery_queue where delivery_id = new.id for update;
  owner := q.lease_owner;
  until := q.lease_expires_at;
  if tg_op = 'INSERT' then
    if new.lease_expires_at is not null then
      owner := new.lease_owner;
      until := new.lease_expires_at;
    end if;
  elsif (old.lease_owner, old.lease_expires_at) is distinct from (new.lease_owner, new.lease_expires_at) then
    owner := new.lease_owner;
    until := new.lease_expires_at;
  elsif old.status is distinct from new.status or old.attempt_count is distinct from new.attempt_count
     or old.updated_at is distinct from new.updated_at then
    owner := null;
    until := null;
  end if;
  if q.delivery_id is not null then
    was := holdfast_leasable_at(q.next_attempt_at, q.lease_expires_at);
    update holdfast_delivery_queue set
      endpoint_id = new.endpoint_id, account_id = new.account_id, event_id = new.event_id,
      event_type = new.event_type, attempt_count = new.attempt_count, retry_base = new.retry_base,
      next_attempt_at = new.next_attempt_at, lease_owner = owner, lease_expires_at = until,
      ordering_key = new.ordering_key, ordering_pos = new.ordering_pos, created_at = new.created_at
    where delivery_id = new.id;
  else
    insert into holdfast_delivery_queue
      (delivery_id, endpoint_id, account_id, event_id, event_type, attempt_count, retry_base,
       next_attempt_at, lease_owner, lease_expires_at, ordering_key, ordering_pos, created_at)
    values (new.id, new.endpoint_id, new.account_id, new.event_id, new.event_type, new.attempt_count,
            new.retry_base, new.next_attempt_at, owner, until, new.ordering_key, new.ordering_pos,
            new.created_at);
  end if;
  now_at := holdfast_leasable_at(new.next_attempt_at, until);
  if now_at is not null and (was is null or now_at < was) then
    perform holdfast_queue_wake(new.endpoint_id, now_at);
  end if;
  return null;
end
$fn$;

create function holdfast_delivery_queue_truncated() returns trigger
language plpgsql volatile
set search_path from current
as $fn$
begin
  truncate holdfast_delivery_queue, holdfast_endpoint_wakes;
  return null;
end
$fn$;

create trigger holdfast_deliveries_queue_insert
  after insert on holdfast_deliveries
  for each row when (new.status in ('pending', 'failed'))
  execute function holdfast_delivery_queued();
create trigger holdfast_deliveries_queue_update
  after update of status, next_attempt_at, lease_owner, lease_expires_at, ordering_pos, endpoint_id,
    attempt_count, retry_base, updated_at on holdfast_deliveries
  for each row when (
    (old.status in ('pending', 'failed') or new.status in ('pending', 'failed')) and (
      old.status is distinct from new.status
      or old.next_attempt_at is distinct from new.next_attempt_at
      or old.lease_owner is distinct from new.lease_owner
      or old.lease_expires_at is distinct from new.lease_expires_at
      or old.ordering_pos is distinct from new.ordering_pos
      or old.endpoint_id is distinct from new.endpoint_id
      or old.attempt_count is distinct from new.attempt_count
      or old.retry_base is distinct from new.retry_base
      or old.updated_at is distinct from new.updated_at))
  execute function holdfast_delivery_queued();
create trigger holdfast_deliveries_queue_delete
  after delete on holdfast_deliveries
  for each row when (old.status in ('pending', 'failed'))
  execute function holdfast_delivery_queued();
create trigger holdfast_deliveries_queue_truncate
  after truncate on holdfast_deliveries
  for each statement execute function holdfast_delivery_queue_truncated();

-- The deliveries unfinished when this migration runs.
insert into holdfast_delivery_queue
  (delivery_id, endpoint_id, account_id, event_id, event_type, attempt_count, retry_base,
   next_attempt_at, lease_owner, lease_expires_at, ordering_key, ordering_pos, created_at)
select id, endpoint_id, account_id, event_id, event_type, attempt_count, retry_base,
       next_attempt_at, lease_owner, lease_expires_at, ordering_key, ordering_pos, created_at
from holdfast_deliveries where status in ('pending', 'failed');

-- Applies the wakes of up to `p_limit` endpoints: their turns locked (`skip locked`: a turn
-- another round or the repair holds keeps its wakes for a later call), moved no later than the
-- earliest wake, and those wakes deleted. Wakes of an endpoint that no longer exists are
-- deleted with nothing to move.
create function holdfast_queue_wakes(p_limit integer)
returns void
language plpgsql volatile
set search_path from current
set enable_seqscan = off
set enable_bitmapscan = off
set jit = off
as $fn$
declare
  waking text[];
  woken text[];
begin
  select array_agg(distinct w.endpoint_id) into waking
  from (select x.endpoint_id from holdfast_endpoint_wakes x limit p_limit) w;
  if waking is null then
    return;
  end if;
  select array_agg(t.endpoint_id) into woken from (
    select t.endpoint_id from holdfast_endpoint_queue t
    where t.endpoint_id = any(waking)
    order by t.endpoint_id
    for no key update skip locked) t;
  delete from holdfast_endpoint_wakes w
  where w.endpoint_id = any(waking)
    and not exists (select 1 from holdfast_endpoint_queue t where t.endpoint_id = w.endpoint_id);
  if woken is null then
    return;
  end if;
  with gone as (
    delete from holdfast_endpoint_wakes w where w.endpoint_id = any(woken)
    returning w.endpoint_id, w.at
  ),
  earliest as (
    select gone.endpoint_id, min(gone.at) as at from gone group by gone.endpoint_id
  )
  update holdfast_endpoint_queue t set turn = least(t.turn, earliest.at)
  from earliest where t.endpoint_id = earliest.endpoint_id and earliest.at < t.turn;
end
$fn$;

-- Moves later the turns of endpoints a round would visit for nothing: those with no delivery
-- leasable now (all leased, retrying later, waiting in a line, none queued) to when the first
-- one can be (or `infinity`), and a disabled or deleted endpoint's to `infinity` (enabling it
-- brings it back). Two steps, each with a snapshot of its own: the turns are locked `for update`
-- first, skipping those a writer holds (`for key share`), then what is queued is read, so every
-- delivery committed before the lock is seen, and a writer after it waits for this to commit and
-- then finds the turn later than its delivery, and appends a wake. Returns how many turns it
-- moved. Workers call it with their periodic repair.
create function holdfast_queue_settle(p_at timestamptz, p_limit integer)
returns integer
language plpgsql volatile
set search_path from current
set enable_seqscan = off
set enable_bitmapscan = off
set jit = off
as $fn$
declare
  locked text[];
  moved integer;
begin
  select array_agg(l.endpoint_id) into locked from (
    select r.endpoint_id from holdfast_endpoint_queue r
    where r.turn <= p_at
    order by r.turn, r.shuffle
    limit p_limit
    for update skip locked) l;
  if locked is null then
    return 0;
  end if;
  with next as (
    select r.endpoint_id,
           coalesce((e.status = 'active' and e.deleted_at is null), false) as active,
           least(
             (select min(q.next_attempt_at) from holdfast_delivery_queue q
              where q.endpoint_id = r.endpoint_id and q.lease_expires_at is null and q.next_attempt_at is not null),
             (select min(greatest(q.lease_expires_at, q.next_attempt_at)) from holdfast_delivery_queue q
              where q.endpoint_id = r.endpoint_id and q.lease_expires_at is not null)) as at
    from holdfast_endpoint_queue r
    left join holdfast_webhook_endpoints e on e.id = r.endpoint_id
    where r.endpoint_id = any(locked)
  ),
  later as (
    update holdfast_endpoint_queue r
    set turn = case when next.active then coalesce(next.at, 'infinity') else 'infinity' end
    from next
    where r.endpoint_id = next.endpoint_id
      and (not next.active or next.at is null or next.at > p_at)
    returning r.endpoint_id
  )
  select count(*) into moved from later;
  return moved;
end
$fn$;

-- The lease round (`leaseStatement`, `src/lease.ts`), as in migration 005 but reading the queue:
--
-- 0. The wakes are applied (`holdfast_queue_wakes`), in a statement of their own, so the round
--    sees the turns they moved.
-- 1. `settled`: as before.
-- 2. `candidates`: endpoints in turn order (`holdfast_endpoint_queue_turn`), walked only until
--    `p_limit` of them qualify (those of accounts under their share first, then the others: the
--    same walk twice, the second only if the first ends short), each with what the round needs
--    of its endpoint, pacing row (`skip locked`) and release stripes, and with a delivery it can
--    take now (a due unleased one heading its line, or an expired lease). An endpoint a round
--    visits for nothing costs one visit until the periodic repair moves its turn
--    (`holdfast_queue_settle`).
-- 3. `parted`, `picked`, `paced`: as before, on queue rows (`skip locked`). `leased` writes the
--    lease on the queue rows only. The endpoints served go to the back of the turn order
--    (`turned`; writers hold turns `for key share`, which does not keep them from moving; a turn
--    another round, a wake or the repair holds keeps its place). Every lock is taken with `skip
--    locked`: a round never waits.
create or replace function holdfast_lease_deliveries(
  p_owner text, p_limit integer, p_max integer, p_at timestamptz, p_lease_until timestamptz,
  p_paused text[], p_share integer, p_running_ids text[], p_running_n integer[],
  p_settled_ids text[], p_settled_counts integer[],
  p_account_share integer, p_account_ids text[], p_account_n integer[])
returns table (
  id text, account_id text, event_id text, endpoint_id text, event_type text, attempt_count integer,
  retry_base integer, url text, secret text, previous_secret text, previous_secret_expires_at timestamptz,
  payload text)
language plpgsql volatile
set search_path from current
set enable_seqscan = off
set enable_bitmapscan = off
set enable_hashjoin = off
set enable_mergejoin = off
set enable_sort = off
set enable_incremental_sort = off
set jit = off
set plan_cache_mode = force_generic_plan
as $fn$
#variable_conflict use_column
begin
  perform holdfast_queue_wakes(p_limit * 4);
  return query
  with settled as materialized (
    select s.endpoint_id, count(*) as n
    from unnest(p_settled_ids, p_settled_counts) as a (id, attempt_count)
    cross join lateral (
      select s.endpoint_id from holdfast_delivery_queue s
      where s.delivery_id = a.id and s.attempt_count = a.attempt_count and s.lease_owner = p_owner
        and coalesce(s.lease_expires_at, '-infinity') > p_at
      limit 1
    ) s
    group by s.endpoint_id
  ),
  running as materialized (
    select mine.endpoint_id, mine.n from unnest(p_running_ids, p_running_n) as mine (endpoint_id, n)
  ),
  busy as materialized (
    select acct.account_id, acct.n from unnest(p_account_ids, p_account_n) as acct (account_id, n)
  ),
  candidates as materialized (
    select c.* from (
      (select r.endpoint_id, r.account_id, false as over from holdfast_endpoint_queue r
       where r.turn <= p_at
         and coalesce((select b.n from busy b where b.account_id = r.account_id), 0)
               < coalesce(p_account_share, 2147483647)
       order by r.turn, r.shuffle)
      union all
      (select r.endpoint_id, r.account_id, true from holdfast_endpoint_queue r
       where r.turn <= p_at and p_account_share is not null
         and coalesce((select b.n from busy b where b.account_id = r.account_id), 0) >= p_account_share
       order by r.turn, r.shuffle)
    ) w
    cross join lateral (
      select p.endpoint_id, e.account_id,
             -- How many more this account takes within its share of this worker's slots.
             coalesce(p_account_share - coalesce((select b.n from busy b where b.account_id = e.account_id), 0),
                      2147483647) as account_room,
             (floor(least(coalesce(p.concurrency_limit, p_max), p_max))
               - (p.in_flight - coalesce(rel.released, 0) - coalesce(st.n, 0)))::int as room,
             p_share - coalesce((select m.n from running m where m.endpoint_id = p.endpoint_id), 0) as share_room,
             case when e.max_per_second is null then null else least(
               greatest(1.0, e.max_per_second / 10.0),
               coalesce(p.tokens, greatest(1.0, e.max_per_second / 10.0))
                 + extract(epoch from p_at - coalesce(p.tokens_at, p_at)) * e.max_per_second
             ) end as tokens,
             e.url, e.secret, e.previous_secret, e.previous_secret_expires_at
      from holdfast_endpoint_pacing p
      join holdfast_webhook_endpoints e on e.id = p.endpoint_id
      left join lateral (
        select sum(rl.released) as released from holdfast_endpoint_releases rl where rl.endpoint_id = p.endpoint_id
      ) rel on true
      left join settled st on st.endpoint_id = p.endpoint_id
      where p.endpoint_id = w.endpoint_id
        and e.status = 'active' and e.deleted_at is null
        and coalesce((select m.n from running m where m.endpoint_id = w.endpoint_id), 0) < p_share
        and (p.paused_until is null or p.paused_until <= p_at)
        and p.endpoint_id <> all(p_paused)
        -- An empty maxPerSecond bucket would take one of the round's places and get no delivery.
        and (e.max_per_second is null or least(
               greatest(1.0, e.max_per_second / 10.0),
               coalesce(p.tokens, greatest(1.0, e.max_per_second / 10.0))
                 + extract(epoch from p_at - coalesce(p.tokens_at, p_at)) * e.max_per_second) >= 1)
        and (exists (
              select 1 from holdfast_delivery_queue q
              where q.endpoint_id = w.endpoint_id and q.lease_expires_at is null and q.next_attempt_at <= p_at
                and (q.ordering_key is null or not exists (
                  select 1 from holdfast_delivery_queue h
                  where h.endpoint_id = q.endpoint_id and h.ordering_key = q.ordering_key
                    and h.ordering_pos < q.ordering_pos))
              offset 0)
            or exists (
              select 1 from holdfast_delivery_queue q
              where q.endpoint_id = w.endpoint_id and q.lease_expires_at < p_at and q.next_attempt_at <= p_at
                and (q.ordering_key is null or not exists (
                  select 1 from holdfast_delivery_queue h
                  where h.endpoint_id = q.endpoint_id and h.ordering_key = q.ordering_key
                    and h.ordering_pos < q.ordering_pos))
              offset 0))
        and (floor(least(coalesce(p.concurrency_limit, p_max), p_max))
               > p.in_flight - coalesce(rel.released, 0) - coalesce(st.n, 0)
             or exists (
               select 1 from holdfast_delivery_queue q
               where q.endpoint_id = w.endpoint_id and q.lease_expires_at < p_at))
      for update of p skip locked
    ) c
    limit p_limit
  ),
  accounts as (
    select c.account_id, count(*) as endpoints from candidates c group by c.account_id
  ),
  share as (
    -- An equal part of the round per account, split equally among its endpoints.
    select a.account_id, greatest(1, ceil(
             ceil(p_limit::numeric / greatest(1, (select count(*) from accounts))) / a.endpoints))::int as n
    from accounts a
  ),
  parted as materialized (
    select x.id, x.endpoint_id, x.takeover, x.account_id, x.account_room from (
      select t.id, t.endpoint_id, true as takeover, c.account_id, c.account_room
      from candidates c join share on share.account_id = c.account_id
      cross join lateral (
        select q.delivery_id as id, q.endpoint_id from holdfast_delivery_queue q
        where q.endpoint_id = c.endpoint_id and q.lease_expires_at < p_at and q.next_attempt_at <= p_at
        limit least(share.n, c.share_room)
        for update of q skip locked
      ) t
      union all
      select f.id, f.endpoint_id, false, c.account_id, c.account_room
      from candidates c join share on share.account_id = c.account_id
      cross join lateral (
        select q.delivery_id as id, q.endpoint_id from holdfast_delivery_queue q
        where q.endpoint_id = c.endpoint_id and q.lease_expires_at is null and q.next_attempt_at <= p_at
          and (q.ordering_key is null or not exists (
            select 1 from holdfast_delivery_queue h
            where h.endpoint_id = q.endpoint_id and h.ordering_key = q.ordering_key
              and h.ordering_pos < q.ordering_pos))
        order by q.next_attempt_at, q.delivery_id
        limit greatest(0, least(c.room, c.share_room, share.n, coalesce(floor(c.tokens)::int, share.n)))
        for update of q skip locked
      ) f
    ) x
  ),
  picked as materialized (
    -- Within each account's share first; beyond it only the slots nobody under its share took.
    select r.id, r.endpoint_id, r.takeover from (
      select x.id, x.endpoint_id, x.takeover, x.account_room,
             row_number() over (partition by x.account_id order by x.takeover desc, x.id) as rn
      from parted x
    ) r
    order by r.rn > r.account_room, random()
    limit p_limit
  ),
  charged as (
    select picked.endpoint_id, (count(*) filter (where not picked.takeover))::int as n
    from picked group by picked.endpoint_id
  ),
  paced as (
    update holdfast_endpoint_pacing p set
      in_flight = p.in_flight + charged.n,
      tokens = case when c.tokens is null then null else c.tokens - charged.n end,
      tokens_at = case when c.tokens is null then null else p_at end
    from charged join candidates c on c.endpoint_id = charged.endpoint_id
    where p.endpoint_id = charged.endpoint_id
  ),
  turned as (
    update holdfast_endpoint_queue r set turn = p_at, shuffle = random()
    from (
      select t.ctid as tid from holdfast_endpoint_queue t
      where t.endpoint_id in (select charged.endpoint_id from charged) and t.turn < p_at
      for no key update skip locked
    ) t
    where r.ctid = t.tid
  ),
  leased as (
    update holdfast_delivery_queue q set lease_owner = p_owner, lease_expires_at = p_lease_until
    from picked
    where q.delivery_id = picked.id
    returning q.delivery_id as id, q.account_id, q.event_id, q.endpoint_id, q.event_type, q.attempt_count,
              q.retry_base, q.created_at
  )
  select l.id, l.account_id, l.event_id, l.endpoint_id, l.event_type, l.attempt_count, l.retry_base,
         c.url, c.secret, c.previous_secret, c.previous_secret_expires_at::timestamptz, ev.payload
  from leased l
  join candidates c on c.endpoint_id = l.endpoint_id
  -- The event's partition from the delivery's `created_at` (an event and its deliveries are
  -- written at one instant); an event written at another instant is looked up in every one.
  cross join lateral (
    select coalesce(
      (select ev.payload from holdfast_events ev where ev.id = l.event_id and ev.created_at = l.created_at),
      (select ev.payload from holdfast_events ev where ev.id = l.event_id limit 1)) as payload
  ) ev;
end
$fn$;

-- A batch of outcomes, as in migration 005, the lease checked on the queue rows. In the order
-- above: the delivery rows of this worker's leases are locked first (found through their queue
-- rows, whose `created_at` picks each one's partition), then their queue rows, read as they are
-- now: a lease another worker took over meanwhile is left alone. The write to each delivery
-- row (its new state) rewrites its queue row through the trigger, which ends the lease or drops
-- the row once the delivery is finished.
create or replace function holdfast_write_outcomes(
  p_owner text, p_stripe integer, p_max integer,
  p_ids text[], p_attempt_ids text[], p_account_ids text[], p_endpoint_ids text[], p_statuses integer[],
  p_errors text[], p_latencies integer[], p_prefixes text[], p_finished timestamptz[], p_next_statuses text[],
  p_next_attempts timestamptz[], p_congested boolean[], p_fast boolean[], p_pause_until timestamptz[])
returns void
language plpgsql volatile
-- The tables beside the function, whatever the caller's search_path (it is called by its
-- qualified name when the sender's tables live in a schema of their own).
set search_path from current
set enable_seqscan = off
set enable_bitmapscan = off
set enable_hashjoin = off
set enable_mergejoin = off
set jit = off
as $fn$
#variable_conflict use_column
declare
  mine text[];
  made timestamptz[];
begin
  select array_agg(q.delivery_id order by q.delivery_id), array_agg(q.created_at order by q.delivery_id)
  into mine, made
  from holdfast_delivery_queue q
  where q.delivery_id = any(p_ids) and q.lease_owner = p_owner;
  if mine is not null then
    perform 1 from (
      select d.id from holdfast_deliveries d
      join unnest(mine, made) as m (id, created_at) on d.id = m.id and d.created_at = m.created_at
      order by d.id
      for no key update of d) locked;
    select array_agg(q.delivery_id order by q.delivery_id), array_agg(q.created_at order by q.delivery_id)
    into mine, made from (
      select q.delivery_id, q.created_at from holdfast_delivery_queue q
      where q.delivery_id = any(mine) and q.lease_owner = p_owner
      order by q.delivery_id
      for update of q) q;
  end if;
  mine := coalesce(mine, '{}');
  made := coalesce(made, '{}');
  with r as (
    select * from unnest(p_ids, p_attempt_ids, p_account_ids, p_endpoint_ids, p_statuses, p_errors, p_latencies,
                         p_prefixes, p_finished, p_next_statuses, p_next_attempts, p_congested, p_fast, p_pause_until)
      as r (id, attempt_id, account_id, endpoint_id, http_status, error, latency_ms, prefix, finished,
            next_status, next_attempt_at, congested, fast, pause_until)
  ),
  attempts as (
    insert into holdfast_delivery_attempts
      (id, delivery_id, account_id, endpoint_id, status, error, latency_ms, response_body_prefix, created_at)
    select attempt_id, id, account_id, endpoint_id, http_status, error, latency_ms, prefix, finished from r
  ),
  healthy as (
    update holdfast_webhook_endpoints e set failing_since = null, disable_warned_at = null
    where e.failing_since is not null
      and e.id in (select r.endpoint_id from r where r.next_status = 'succeeded')
  ),
  done as (
    update holdfast_deliveries d set
      status = r.next_status,
      attempt_count = d.attempt_count + 1,
      next_attempt_at = r.next_attempt_at,
      last_attempt_at = r.finished,
      last_status = r.http_status,
      last_error = r.error,
      lease_owner = null, lease_expires_at = null,
      updated_at = r.finished
    from r join unnest(mine, made) as m (id, created_at) on m.id = r.id
    where d.id = r.id and d.created_at = m.created_at and r.id = any(mine)
    returning d.endpoint_id
  ),
  released as (
    insert into holdfast_endpoint_releases (endpoint_id, stripe, released)
    select done.endpoint_id, p_stripe, count(*) from done group by done.endpoint_id order by done.endpoint_id
    on conflict (endpoint_id, stripe) do update
      set released = holdfast_endpoint_releases.released + excluded.released
  ),
  per_endpoint as (
    select r.endpoint_id, bool_or(r.congested) as congested, (count(*) filter (where r.fast))::real as fast,
           max(r.pause_until) as pause_until
    from r group by r.endpoint_id
  ),
  locked as (
    select p.endpoint_id from holdfast_endpoint_pacing p join per_endpoint s on s.endpoint_id = p.endpoint_id
    where s.congested
       or (s.pause_until is not null and (p.paused_until is null or p.paused_until < s.pause_until))
       or (s.fast > 0 and coalesce(p.concurrency_limit, p_max) < p_max)
       or p.concurrency_max is distinct from p_max
    order by p.endpoint_id
    for update of p
  )
  update holdfast_endpoint_pacing p set
    concurrency_max = p_max,
    concurrency_limit = case
      when s.congested then greatest(1, least(coalesce(p.concurrency_limit, p_max), p_max) / 2)
      else least(p_max, least(coalesce(p.concurrency_limit, p_max), p_max)
                 + s.fast / greatest(1, least(coalesce(p.concurrency_limit, p_max), p_max)))
    end,
    paused_until = case when s.pause_until is not null and (p.paused_until is null or p.paused_until < s.pause_until)
                        then s.pause_until else p.paused_until end
  from per_endpoint s
  where p.endpoint_id = s.endpoint_id and s.endpoint_id in (select locked.endpoint_id from locked);
end
$fn$;
