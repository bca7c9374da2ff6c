-- A turn another worker's round has just moved has come for every round that sees it.
--
-- A round moves the turns of the endpoints it serves to its own time, `p_at`, the worker's clock
-- when it planned the round, and visits only endpoints whose turn is at or before its own
-- `p_at`. A round of another worker that planned a moment earlier, or whose clock is a little
-- behind, and sees that move committed, found the turn still to come and passed the endpoint
-- over, and leased nothing there until its next round: a worker whose clock is behind the
-- others' never served the endpoints they kept serving. Now a turn
-- has come when it is at or before the later of `p_at` and the database's clock as the round
-- starts: a move is committed before a round that sees it starts, and was made at its worker's
-- time, so it has come for that round whenever the clocks agree, and whatever the workers'
-- `p_at`. Deliveries are still due by `p_at` alone.
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
declare
  come timestamptz;
begin
  perform holdfast_queue_wakes(p_limit * 4);
  come := greatest(p_at, clock_timestamp());
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
      select * from (
        select r.endpoint_id, r.account_id, false as over, r.ctid as turn_tid from holdfast_endpoint_queue r
        where r.turn <= come
          and coalesce((select b.n from busy b where b.account_id = r.account_id), 0)
                < coalesce(p_account_share, 2147483647)
        order by r.turn, r.shuffle) under
      union all
      select * from (
        select r.endpoint_id, r.account_id, true, r.ctid from holdfast_endpoint_queue r
        where r.turn <= come and p_account_share is not null
          and coalesce((select b.n from busy b where b.account_id = r.account_id), 0) >= p_account_share
        order by r.turn, r.shuffle) over
    ) w
    -- The first due delivery heading its line, read once: the due part of the round locks it by
    -- its ctid instead of looking for it again. Found before the endpoint's other rows are read,
    -- so the conditions below that need only it and the turn gate the rest: an endpoint with
    -- nothing to take costs its probes, not its pacing, endpoint and release rows.
    left join lateral (
      select q.ctid as tid, q.delivery_id from holdfast_delivery_queue q
      where q.endpoint_id = w.endpoint_id and q.lease_expires_at is null and q.next_attempt_at <= p_at
        and (q.ordering_key is null or not exists (
          select 1 from holdfast_delivery_queue h
          where h.endpoint_id = q.endpoint_id and h.ordering_key = q.ordering_key
            and h.ordering_pos < q.ordering_pos))
      order by q.next_attempt_at, q.delivery_id
      limit 1
    ) head on true
    cross join lateral (
      select p.endpoint_id, e.account_id, p.ctid as pacing_tid, t.ctid as turn_tid, head.tid as head_tid, head.delivery_id as head_id,
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
      -- The turn, locked only for an endpoint that qualifies, so the move writes it by ctid.
      join holdfast_endpoint_queue t on t.ctid = w.turn_tid
      left join lateral (
        select sum(rl.released) as released from holdfast_endpoint_releases rl where rl.endpoint_id = p.endpoint_id
      ) rel on true
      left join settled st on st.endpoint_id = p.endpoint_id
      where p.endpoint_id = w.endpoint_id and t.endpoint_id = w.endpoint_id and t.turn <= come
        and e.status = 'active' and e.deleted_at is null
        and coalesce((select m.n from running m where m.endpoint_id = w.endpoint_id), 0) < p_share
        and (p.paused_until is null or p.paused_until <= p_at)
        and p.endpoint_id <> all(p_paused)
        -- An empty maxPerSecond bucket would take one of the round's places and get no delivery.
        and (e.max_per_second is null or least(
               greatest(1.0, e.max_per_second / 10.0),
               coalesce(p.tokens, greatest(1.0, e.max_per_second / 10.0))
                 + extract(epoch from p_at - coalesce(p.tokens_at, p_at)) * e.max_per_second) >= 1)
        and (head.tid is not null
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
      for no key update of t skip locked
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
    -- With the candidate's columns the rest of the round needs, so no later step joins
    -- `candidates` again (a nested loop over two CTEs, `limit` squared comparisons).
    select x.* from (
      select t.id, t.endpoint_id, true as takeover, t.tid, c.account_id, c.account_room, c.tokens, c.pacing_tid, c.turn_tid, c.url, c.secret, c.previous_secret, c.previous_secret_expires_at
      from candidates c join share on share.account_id = c.account_id
      cross join lateral (
        select q.delivery_id as id, q.endpoint_id, q.ctid as tid from holdfast_delivery_queue q
        where q.endpoint_id = c.endpoint_id and q.lease_expires_at < p_at and q.next_attempt_at <= p_at
        limit least(share.n, c.share_room)
        for update of q skip locked
      ) t
      union all
      select f.id, f.endpoint_id, false, f.tid, c.account_id, c.account_room, c.tokens, c.pacing_tid, c.turn_tid, c.url, c.secret, c.previous_secret, c.previous_secret_expires_at
      from candidates c join share on share.account_id = c.account_id
      cross join lateral (
        select greatest(0, least(c.room, c.share_room, share.n, coalesce(floor(c.tokens)::int, share.n))) as n
      ) due
      cross join lateral (
        -- The head the candidate found, by its ctid (a row another round leased meanwhile fails
        -- the recheck of these conditions on its new version and is skipped).
        select * from (
          select q.delivery_id as id, q.endpoint_id, q.ctid as tid from holdfast_delivery_queue q
          where q.ctid = c.head_tid and q.delivery_id = c.head_id and due.n > 0
            and q.lease_expires_at is null and q.next_attempt_at <= p_at
          for update of q skip locked) head
        union all
        select * from (
         select q.delivery_id as id, q.endpoint_id, q.ctid from holdfast_delivery_queue q
         where q.endpoint_id = c.endpoint_id and q.lease_expires_at is null and q.next_attempt_at <= p_at
           and q.delivery_id is distinct from c.head_id
           and (q.ordering_key is null or not exists (
             select 1 from holdfast_delivery_queue h
             where h.endpoint_id = q.endpoint_id and h.ordering_key = q.ordering_key
               and h.ordering_pos < q.ordering_pos))
         order by q.next_attempt_at, q.delivery_id
         limit greatest(0, due.n - 1)
         for update of q skip locked) more
      ) f
    ) x
  ),
  picked as materialized (
    -- Within each account's share first; beyond it only the slots nobody under its share took.
    select r.* from (
      select x.*,
             row_number() over (partition by x.account_id order by x.takeover desc, x.id) as rn
      from parted x
    ) r
    order by r.rn > r.account_room, random()
    limit p_limit
  ),
  leased as (
    -- By ctid: each row is locked by this statement. A row another transaction rewrote after this
    -- statement's snapshot (and that was locked in its new version) is not seen here, so it is
    -- not leased, and not charged either: the charges count the rows leased.
    update holdfast_delivery_queue q set lease_owner = p_owner, lease_expires_at = p_lease_until
    from picked
    where q.ctid = picked.tid
    returning q.delivery_id as id, q.account_id, q.event_id, q.endpoint_id, q.event_type, q.attempt_count,
              q.retry_base, q.created_at, picked.takeover, picked.tokens, picked.pacing_tid, picked.turn_tid,
              picked.url, picked.secret, picked.previous_secret, picked.previous_secret_expires_at
  ),
  charged as (
    select leased.endpoint_id, (count(*) filter (where not leased.takeover))::int as n,
           min(leased.tokens) as tokens, min(leased.pacing_tid) as pacing_tid, min(leased.turn_tid) as turn_tid
    from leased group by leased.endpoint_id
  ),
  paced as (
    -- By the ctid of the version locked; one rewritten after the snapshot (outcomes and the
    -- limit's increase write pacing rows often) is not found by it, and is charged by `repaced`.
    update holdfast_endpoint_pacing p set
      in_flight = p.in_flight + charged.n,
      tokens = case when charged.tokens is null then null else charged.tokens - charged.n end,
      tokens_at = case when charged.tokens is null then null else p_at end
    from charged
    where p.ctid = charged.pacing_tid
    returning p.endpoint_id
  ),
  repaced as (
    -- Through the key, the version of the snapshot, which the update follows to the one locked.
    update holdfast_endpoint_pacing p set
      in_flight = p.in_flight + charged.n,
      tokens = case when charged.tokens is null then null else charged.tokens - charged.n end,
      tokens_at = case when charged.tokens is null then null else p_at end
    from charged
    where p.endpoint_id = charged.endpoint_id
      and charged.endpoint_id not in (select paced.endpoint_id from paced)
  ),
  turned as (
    update holdfast_endpoint_queue r set turn = p_at, shuffle = random()
    from charged
    where r.ctid = charged.turn_tid and r.turn < p_at
  )
  select l.id, l.account_id, l.event_id, l.endpoint_id, l.event_type, l.attempt_count, l.retry_base,
         l.url, l.secret, l.previous_secret, l.previous_secret_expires_at::timestamptz, ev.payload
  from leased l
  -- The event's partition from the delivery's `created_at` (an event and its deliveries are
  -- written at one instant); an event written at another instant is looked up in every one.
  cross join lateral (
    select coalesce(
      (select ev.payload from holdfast_events ev where ev.id = l.event_id and ev.created_at = l.created_at),
      (select ev.payload from holdfast_events ev where ev.id = l.event_id limit 1)) as payload
  ) ev;
end
$fn$;
