-- The functions the hot statements call, each one round trip whose plan is pinned (the package
-- README, "Plans"): `holdfast_lease_deliveries` (a round's lease), `holdfast_write_outcomes` (a
-- batch of attempts' outcomes) and the payload filter the fan-out evaluates,
-- `holdfast_filter_match` (the README, "Filters"). Each reads the tables beside it whatever the
-- caller's search_path. A release that changes one adds a migration that replaces it.
drop function if exists holdfast_lease_deliveries(
  text, integer, integer, timestamptz, timestamptz, text[], integer, text[], integer[], text[], integer[]);
-- The lease round. Called by `leaseStatement` (`src/lease.ts`) with named arguments.
--
-- 1. `settled`: this worker's answered attempts whose outcome is not written yet, counted only
--    while their lease is still this worker's at the attempt count they were leased at.
-- 2. `candidates`: up to `p_limit` endpoints with due work, in random order (those of accounts
--    under their share of this worker's slots, `p_account_share`, first), whose pacing row is
--    free (`skip locked`), not paused, with a `max_per_second` token if they have a rate, with
--    room under their adaptive limit (in flight = charged
--    minus released minus settled) or an expired lease to take over, and under this worker's
--    share of its slots.
-- 3. `parted`: per endpoint, expired leases first (already counted in flight), then due unleased
--    deliveries, oldest first, up to the room, the `max_per_second` tokens and an equal part
--    (of an equal part per account). `picked` keeps `p_limit` of them: first those within their
--    account's share (`p_account_share` minus the account's unanswered attempts in this worker,
--    `p_account_ids`/`p_account_n`), then the rest, so an account goes beyond its share only in
--    slots no other account in the round could use (work-conserving).
--    A delivery of an ordered endpoint (`ordering_key` set) is taken only when it heads its line:
--    no unfinished delivery of its endpoint and key has a lower `ordering_pos`. The head is the
--    only one of its line that is ever leased (a line's later places are taken after every place
--    before them, and a replay joins the back), so the unique index on leased lines is never hit;
--    a head waiting for its retry holds back its line only. The same test keeps an endpoint whose
--    due deliveries all wait behind a busy head out of `candidates`. Unordered deliveries skip it
--    (`ordering_key is null`), so their path is the one it was.
-- 4. `paced`, `leased`: charge the pacing rows, lease the deliveries, return what the attempts need.
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
-- The tables beside the function, whatever the caller's search_path (it is called by its
-- qualified name when the sender's tables live in a schema of their own).
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
  return query
  with settled as materialized (
    select s.endpoint_id, count(*) as n
    from unnest(p_settled_ids, p_settled_counts) as a (id, attempt_count)
    cross join lateral (
      select s.endpoint_id from holdfast_deliveries s
      where s.id = a.id and s.attempt_count = a.attempt_count and s.lease_owner = p_owner
        and coalesce(s.lease_expires_at, '-infinity') > p_at
      limit 1
    ) s
    group by s.endpoint_id
  ),
  candidates as materialized (
    select p.endpoint_id, e.account_id,
           -- How many more this account takes within its share of this worker's slots.
           coalesce(p_account_share - coalesce(acct.n, 0), 2147483647) as account_room,
           (floor(least(coalesce(p.concurrency_limit, p_max), p_max))
             - (p.in_flight - coalesce(rel.released, 0) - coalesce(st.n, 0)))::int as room,
           p_share - coalesce(mine.n, 0) as share_room,
           case when e.max_per_second is null then null else least(
             greatest(1.0, e.max_per_second / 10.0),
             coalesce(p.tokens, greatest(1.0, e.max_per_second / 10.0))
               + extract(epoch from p_at - coalesce(p.tokens_at, p_at)) * e.max_per_second
           ) end as tokens
    from holdfast_endpoint_pacing p
    join holdfast_webhook_endpoints e on e.id = p.endpoint_id
    left join lateral (
      select sum(r.released) as released from holdfast_endpoint_releases r where r.endpoint_id = p.endpoint_id
    ) rel on true
    left join unnest(p_running_ids, p_running_n) as mine (endpoint_id, n) on mine.endpoint_id = p.endpoint_id
    left join settled st on st.endpoint_id = p.endpoint_id
    left join unnest(p_account_ids, p_account_n) as acct (account_id, n) on acct.account_id = e.account_id
    where e.status = 'active' and e.deleted_at is null
      and coalesce(mine.n, 0) < p_share
      and (p.paused_until is null or p.paused_until <= p_at)
      and p.endpoint_id <> all(p_paused)
      -- An empty maxPerSecond bucket would take one of the round's places and get no delivery.
      and (e.max_per_second is null or least(
             greatest(1.0, e.max_per_second / 10.0),
             coalesce(p.tokens, greatest(1.0, e.max_per_second / 10.0))
               + extract(epoch from p_at - coalesce(p.tokens_at, p_at)) * e.max_per_second) >= 1)
      and exists (
        select 1 from holdfast_deliveries d
        where d.endpoint_id = p.endpoint_id and d.status in ('pending', 'failed') and d.next_attempt_at <= p_at
          and (d.lease_expires_at is null or d.lease_expires_at < p_at)
          and (d.ordering_key is null or not exists (
            select 1 from holdfast_deliveries h
            where h.endpoint_id = d.endpoint_id and h.ordering_key = d.ordering_key
              and h.status in ('pending', 'failed') and h.ordering_pos < d.ordering_pos))
        offset 0)
      and (floor(least(coalesce(p.concurrency_limit, p_max), p_max))
             > p.in_flight - coalesce(rel.released, 0) - coalesce(st.n, 0)
           or exists (
             select 1 from holdfast_deliveries d
             where d.endpoint_id = p.endpoint_id and d.lease_expires_at < p_at
               and d.status <> 'succeeded' and d.status <> 'dead'))
    -- Endpoints of accounts under their share first.
    order by coalesce(acct.n, 0) >= coalesce(p_account_share, 2147483647), random()
    limit p_limit
    for update of p skip locked
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
        select d.id, d.endpoint_id from holdfast_deliveries d
        where d.endpoint_id = c.endpoint_id and d.lease_expires_at < p_at
          and d.status <> 'succeeded' and d.status <> 'dead' and d.next_attempt_at <= p_at
        limit least(share.n, c.share_room)
        for update of d skip locked
      ) t
      union all
      select f.id, f.endpoint_id, false, c.account_id, c.account_room
      from candidates c join share on share.account_id = c.account_id
      cross join lateral (
        select d.id, d.endpoint_id from holdfast_deliveries d
        where d.endpoint_id = c.endpoint_id and d.status in ('pending', 'failed')
          and d.next_attempt_at <= p_at and d.lease_expires_at is null
          and (d.ordering_key is null or not exists (
            select 1 from holdfast_deliveries h
            where h.endpoint_id = d.endpoint_id and h.ordering_key = d.ordering_key
              and h.status in ('pending', 'failed') and h.ordering_pos < d.ordering_pos))
        order by d.next_attempt_at, d.id
        limit greatest(0, least(c.room, c.share_room, share.n, coalesce(floor(c.tokens)::int, share.n)))
        for update of d skip locked
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
  leased as (
    update holdfast_deliveries d set lease_owner = p_owner, lease_expires_at = p_lease_until
    from picked
    where d.id = picked.id
    returning d.id, d.account_id, d.event_id, d.endpoint_id, d.event_type, d.attempt_count, d.retry_base
  )
  select l.id, l.account_id, l.event_id, l.endpoint_id, l.event_type, l.attempt_count, l.retry_base,
         e.url, e.secret, e.previous_secret, e.previous_secret_expires_at::timestamptz, ev.payload
  from leased l
  join holdfast_webhook_endpoints e on e.id = l.endpoint_id
  join holdfast_events ev on ev.id = l.event_id;
end
$fn$;

-- A batch of outcomes. Called by `writeOutcomes` (`src/outcomes.ts`) with named arguments: one
-- array per column of the batch, unnested into rows.
--
-- Writes the attempt rows, each delivery's new state and lease release (only leases this worker
-- still owns), the success side of endpoint health, the places released in this worker's release
-- stripe, and the pacing row only where something changes (the AIMD limit or a `Retry-After`
-- pause), so in steady state no outcome statement touches the row lease statements lock.
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
begin
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
    from r where d.id = r.id and d.lease_owner = p_owner
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

-- The payload filter, evaluated by the fan-out statement itself, so an event, its sequence and
-- its filtered deliveries stay one statement and one round trip: the fan-out calls
-- `holdfast_filter_match(e.filter, payload::jsonb)` for each subscribed endpoint that has a filter.
-- A path that is absent never equals anything (not even `null`), so `$ne`, `$nin` and `$not` match
-- it; `$gt`, `$gte`, `$lt`, `$lte` compare numbers with numbers and strings with strings (by
-- Unicode code point: `collate "C"` is UTF-8 byte order), and anything else does not match;
-- equality is JSON equality (numbers by value, objects whatever their key order, arrays element by
-- element). A path segment of digits indexes an array; any other segment names an object's key.
create or replace function holdfast_filter_value(p_doc jsonb, p_path text)
returns jsonb
language plpgsql immutable strict parallel safe
as $fn$
declare
  cur jsonb := p_doc;
  seg text;
begin
  foreach seg in array string_to_array(p_path, '.') loop
    if jsonb_typeof(cur) = 'object' then
      cur := cur -> seg;
    elsif jsonb_typeof(cur) = 'array' and seg ~ '^(0|[1-9][0-9]{0,8})$' then
      cur := cur -> seg::int;
    else
      return null;
    end if;
    if cur is null then
      return null;
    end if;
  end loop;
  return cur;
end
$fn$;

create or replace function holdfast_filter_compare(p_value jsonb, p_op text, p_arg jsonb)
returns boolean
language sql immutable parallel safe
as $fn$
  select case
    when jsonb_typeof(p_value) = 'number' and jsonb_typeof(p_arg) = 'number' then
      case p_op
        when '$gt' then p_value::numeric > p_arg::numeric
        when '$gte' then p_value::numeric >= p_arg::numeric
        when '$lt' then p_value::numeric < p_arg::numeric
        else p_value::numeric <= p_arg::numeric
      end
    when jsonb_typeof(p_value) = 'string' and jsonb_typeof(p_arg) = 'string' then
      case p_op
        when '$gt' then (p_value #>> '{}') collate "C" > (p_arg #>> '{}') collate "C"
        when '$gte' then (p_value #>> '{}') collate "C" >= (p_arg #>> '{}') collate "C"
        when '$lt' then (p_value #>> '{}') collate "C" < (p_arg #>> '{}') collate "C"
        else (p_value #>> '{}') collate "C" <= (p_arg #>> '{}') collate "C"
      end
    else false
  end
$fn$;

create or replace function holdfast_filter_match(p_filter jsonb, p_doc jsonb)
returns boolean
language plpgsql immutable parallel safe
-- The functions beside it, whatever the caller's search_path (the fan-out calls it by its
-- qualified name when the sender's tables live in a schema of their own).
set search_path from current
as $fn$
declare
  k text;
  want jsonb;
  op text;
  arg jsonb;
  v jsonb;
  sub jsonb;
  found boolean;
begin
  for k, want in select key, value from jsonb_each(p_filter) loop
    if k = '$and' then
      for sub in select value from jsonb_array_elements(want) loop
        if not holdfast_filter_match(sub, p_doc) then
          return false;
        end if;
      end loop;
    elsif k = '$or' then
      found := false;
      for sub in select value from jsonb_array_elements(want) loop
        if holdfast_filter_match(sub, p_doc) then
          found := true;
          exit;
        end if;
      end loop;
      if not found then
        return false;
      end if;
    elsif k = '$not' then
      if holdfast_filter_match(want, p_doc) then
        return false;
      end if;
    else
      v := holdfast_filter_value(p_doc, k);
      if jsonb_typeof(want) = 'object' and exists (select from jsonb_object_keys(want) o where o like '$%') then
        for op, arg in select key, value from jsonb_each(want) loop
          if not coalesce(case op
            when '$eq' then v = arg
            when '$ne' then v is null or v <> arg
            when '$in' then exists (select from jsonb_array_elements(arg) x where x.value = v)
            when '$nin' then v is null or not exists (select from jsonb_array_elements(arg) x where x.value = v)
            when '$exists' then (v is not null) = (arg = 'true'::jsonb)
            when '$gt' then holdfast_filter_compare(v, op, arg)
            when '$gte' then holdfast_filter_compare(v, op, arg)
            when '$lt' then holdfast_filter_compare(v, op, arg)
            when '$lte' then holdfast_filter_compare(v, op, arg)
            else false
          end, false) then
            return false;
          end if;
        end loop;
      elsif v is null or v <> want then
        return false;
      end if;
    end if;
  end loop;
  return true;
end
$fn$;
