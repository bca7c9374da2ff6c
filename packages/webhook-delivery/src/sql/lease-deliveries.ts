/**
 * The lease statement, held once, as a function so a round is one round trip whose plan is
 * pinned (see the package README, "Plans": which plan, why, and the bench case that fails
 * without it). The function is (re)created by the migration list's last entry, whose id changes
 * with this text, so every release that changes it re-applies it. Called by `leaseStatement`
 * (`../lease.ts`) with named arguments.
 *
 * 1. `settled`: this worker's answered attempts whose outcome is not written yet, counted only
 *    while their lease is still this worker's at the attempt count they were leased at.
 * 2. `candidates`: up to `p_limit` endpoints with due work, in random order (those of accounts
 *    under their share of this worker's slots, `p_account_share`, first), whose pacing row is
 *    free (`skip locked`), not paused, with a `max_per_second` token if they have a rate, with
 *    room under their adaptive limit (in flight = charged
 *    minus released minus settled) or an expired lease to take over, and under this worker's
 *    share of its slots.
 * 3. `parted`: per endpoint, expired leases first (already counted in flight), then due unleased
 *    deliveries, oldest first, up to the room, the `max_per_second` tokens and an equal part
 *    (of an equal part per account). `picked` keeps `p_limit` of them: first those within their
 *    account's share (`p_account_share` minus the account's unanswered attempts in this worker,
 *    `p_account_ids`/`p_account_n`), then the rest, so an account goes beyond its share only in
 *    slots no other account in the round could use (work-conserving).
 *    A delivery of an ordered endpoint (`ordering_key` set) is taken only when it heads its line:
 *    no unfinished delivery of its endpoint and key has a lower `ordering_pos`. The head is the
 *    only one of its line that is ever leased (a line's later places are taken after every place
 *    before them, and a replay joins the back), so the unique index on leased lines is never hit;
 *    a head waiting for its retry holds back its line only. The same test keeps an endpoint whose
 *    due deliveries all wait behind a busy head out of `candidates`. Unordered deliveries skip it
 *    (`ordering_key is null`), so their path is the one it was.
 * 4. `paced`, `leased`: charge the pacing rows, lease the deliveries, return what the attempts need.
 */
export const LEASE_FUNCTION = `
drop function if exists holdfast_lease_deliveries(
  text, integer, integer, timestamptz, timestamptz, text[], integer, text[], integer[], text[], integer[]);
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
`;
