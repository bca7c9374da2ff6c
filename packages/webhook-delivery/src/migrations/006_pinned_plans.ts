/**
 * The lease and outcome statements as functions whose plans are pinned to index access.
 *
 * Both statements touch a handful of rows by key, and the only good plan at any table size walks
 * indexes with nested loops. PostgreSQL does not always pick it, because its view of the tables
 * lags behind a queue's:
 *
 * - A prepared statement keeps the generic plan it made in its sixth run. Made while the tables
 *   were small (a fresh deployment's first minute), it hash-joins sequential scans of every
 *   delivery and event, and keeps doing so once they hold 30,000 rows (60 to 100 ms a round).
 * - Right after a burst of 100,000 deliveries to one endpoint, the statistics still expect a
 *   handful, and a bitmap scan plus a sort of the whole backlog looks as cheap as walking the
 *   index (90 ms a round at 100,000).
 *
 * Either way every endpoint's deliveries waited behind one endpoint's backlog. Here sequential
 * scans, bitmap scans, hash and merge joins and sorts are disabled inside the two functions (a
 * setting of the function, so nothing else on the connection is affected): whatever the
 * statistics say, a round reads only the rows it leases or settles, plus the endpoint's rows in
 * flight. Which index each scan may use is fixed by its conditions, not by estimates: the scans for
 * expired leases say `status <> 'succeeded' and status <> 'dead'` (the same rows as `status in
 * ('pending', 'failed')`) so that only the index of leased rows matches them, never the index of
 * every due row. The one sort left is of the candidate endpoints (`order by random()`), which no index
 * provides. Disabled plan nodes carry a huge cost, which would make PostgreSQL compile every round
 * with its JIT (700 ms), so JIT is off inside them too. The index below holds the exact lease order (`next_attempt_at`, then `id`); the one it
 * replaces ordered by `next_attempt_at` only, so deliveries due at the same instant (a burst fanned
 * out in one commit) had to be sorted before the first could be leased.
 *
 * The statements themselves are explained in `lease.ts` (`leaseDue`) and `outcomes.ts`
 * (`writeOutcomes`), which call them. On a large table, build the index by hand first without
 * blocking writes (`create index concurrently holdfast_deliveries_endpoint_next on
 * holdfast_deliveries (endpoint_id, next_attempt_at, id) where status in ('pending', 'failed')`):
 * the migration then keeps it and drops the old one.
 */
export const pinnedPlans: { readonly id: string; readonly sql: string } = {
  id: 'webhook-delivery/006_pinned_plans',
  sql: `
create index if not exists holdfast_deliveries_endpoint_next
  on holdfast_deliveries (endpoint_id, next_attempt_at, id) where status in ('pending', 'failed');
drop index if exists holdfast_deliveries_endpoint_due;

create or replace function holdfast_lease_deliveries(
  p_owner text, p_limit integer, p_max integer, p_at timestamptz, p_lease_until timestamptz,
  p_paused text[], p_share integer, p_running_ids text[], p_running_n integer[])
returns table (
  id text, account_id text, event_id text, endpoint_id text, event_type text, attempt_count integer,
  retry_base integer, url text, secret text, previous_secret text, previous_secret_expires_at timestamptz,
  payload text)
language plpgsql volatile
set enable_seqscan = off
set enable_bitmapscan = off
set enable_hashjoin = off
set enable_mergejoin = off
set enable_sort = off
set enable_incremental_sort = off
set jit = off
as $fn$
#variable_conflict use_column
begin
  return query
  with candidates as materialized (
    select p.endpoint_id,
           (floor(least(coalesce(p.concurrency_limit, p_max), p_max))
             - (p.in_flight - coalesce(rel.released, 0)))::int as room,
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
    where e.status = 'active' and e.deleted_at is null
      and coalesce(mine.n, 0) < p_share
      and (p.paused_until is null or p.paused_until <= p_at)
      and p.endpoint_id <> all(p_paused)
      and exists (
        select 1 from holdfast_deliveries d
        where d.endpoint_id = p.endpoint_id and d.status in ('pending', 'failed') and d.next_attempt_at <= p_at
          and (d.lease_expires_at is null or d.lease_expires_at < p_at))
      and (floor(least(coalesce(p.concurrency_limit, p_max), p_max)) > p.in_flight - coalesce(rel.released, 0)
           or exists (
             select 1 from holdfast_deliveries d
             where d.endpoint_id = p.endpoint_id and d.lease_expires_at < p_at
               and d.status <> 'succeeded' and d.status <> 'dead'))
    order by random()
    limit p_limit
    for update of p skip locked
  ),
  share as (
    select greatest(1, ceil(p_limit::numeric / greatest(1, count(*))))::int as n from candidates
  ),
  picked as materialized (
    select x.id, x.endpoint_id, x.takeover from (
      select t.id, t.endpoint_id, true as takeover
      from candidates c cross join share
      cross join lateral (
        select d.id, d.endpoint_id from holdfast_deliveries d
        where d.endpoint_id = c.endpoint_id and d.lease_expires_at < p_at
          and d.status <> 'succeeded' and d.status <> 'dead' and d.next_attempt_at <= p_at
        limit least(share.n, c.share_room)
        for update of d skip locked
      ) t
      union all
      select f.id, f.endpoint_id, false
      from candidates c cross join share
      cross join lateral (
        select d.id, d.endpoint_id from holdfast_deliveries d
        where d.endpoint_id = c.endpoint_id and d.status in ('pending', 'failed')
          and d.next_attempt_at <= p_at and d.lease_expires_at is null
        order by d.next_attempt_at, d.id
        limit greatest(0, least(c.room, c.share_room, share.n, coalesce(floor(c.tokens)::int, share.n)))
        for update of d skip locked
      ) f
    ) x
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

create or replace function holdfast_write_outcomes(
  p_owner text, p_stripe integer, p_max integer,
  p_ids text[], p_attempt_ids text[], p_account_ids text[], p_endpoint_ids text[], p_statuses integer[],
  p_errors text[], p_latencies integer[], p_prefixes text[], p_finished timestamptz[], p_next_statuses text[],
  p_next_attempts timestamptz[], p_congested boolean[], p_fast boolean[], p_pause_until timestamptz[])
returns void
language plpgsql volatile
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
`,
};
