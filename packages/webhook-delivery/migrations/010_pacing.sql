-- The additive increase of an endpoint's adaptive limit, out of the outcome statement.
--
-- `holdfast_write_outcomes` (009) locked an endpoint's pacing row for every batch with a fast
-- success while its limit was under the ceiling, which is most of the time after any sign of
-- overload: the limit climbs back by 1 / limit per fast success, thousands of successes to
-- recover. The outcome statement commits durably, so the row stayed locked through the WAL
-- flush, and lease rounds, which take pacing rows `skip locked`, passed over the endpoint
-- meanwhile: under a steady load its new deliveries waited for the rounds that found the row
-- free, tens of milliseconds when the disk is slow to flush.
--
-- Now the outcome statement locks a pacing row only for a sign of overload (halving the limit),
-- a `Retry-After` pause or a new ceiling, as before rare. The increase is its own statement,
-- `holdfast_pace_outcomes`, run after the outcomes commit, without waiting for the flush: it
-- locks only pacing rows, in endpoint order, holding nothing else and waiting for none, and a
-- lost increase (a crash before the flush) only leaves a limit a little lower.

-- A batch of outcomes, as in 009, but the pacing row is locked only for overload, a pause or a
-- new ceiling (the increase is `holdfast_pace_outcomes`). `p_fast` is still taken, unused, so a
-- worker of the previous release keeps working against this schema during a rolling upgrade.
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
    select r.endpoint_id, bool_or(r.congested) as congested, max(r.pause_until) as pause_until
    from r group by r.endpoint_id
  ),
  locked as (
    select p.endpoint_id from holdfast_endpoint_pacing p join per_endpoint s on s.endpoint_id = p.endpoint_id
    where s.congested
       or (s.pause_until is not null and (p.paused_until is null or p.paused_until < s.pause_until))
       or p.concurrency_max is distinct from p_max
    order by p.endpoint_id
    for update of p
  )
  update holdfast_endpoint_pacing p set
    concurrency_max = p_max,
    concurrency_limit = case
      when s.congested then greatest(1, least(coalesce(p.concurrency_limit, p_max), p_max) / 2)
      else least(coalesce(p.concurrency_limit, p_max), p_max)
    end,
    paused_until = case when s.pause_until is not null and (p.paused_until is null or p.paused_until < s.pause_until)
                        then s.pause_until else p.paused_until end
  from per_endpoint s
  where p.endpoint_id = s.endpoint_id and s.endpoint_id in (select locked.endpoint_id from locked);
end
$fn$;

-- Grows the limits of endpoints under their ceiling `p_max` by `p_fast / limit` each (the fast
-- successes of a batch whose outcomes are written). Locks only those pacing rows, in endpoint
-- order, `skip locked`: it never waits (a lease round holding a row is not waited for, nor is
-- another worker's increase) and returns the endpoints it passed over, whose counts the caller
-- carries to its next batch. The caller commits without waiting for the WAL flush.
create or replace function holdfast_pace_outcomes(p_max integer, p_endpoint_ids text[], p_fast integer[])
returns table (endpoint_id text)
language plpgsql volatile
set search_path from current
set jit = off
as $fn$
#variable_conflict use_column
begin
  return query
  with wanted as materialized (
    select f.endpoint_id, f.fast
    from unnest(p_endpoint_ids, p_fast) as f (endpoint_id, fast)
    join holdfast_endpoint_pacing l on l.endpoint_id = f.endpoint_id
    where f.fast > 0 and coalesce(l.concurrency_limit, p_max) < p_max
  ),
  locked as materialized (
    select l.endpoint_id from holdfast_endpoint_pacing l
    where l.endpoint_id in (select w.endpoint_id from wanted w)
    order by l.endpoint_id
    for update of l skip locked
  ),
  grown as (
    update holdfast_endpoint_pacing p set
      concurrency_limit = least(p_max, least(coalesce(p.concurrency_limit, p_max), p_max)
                                       + w.fast::real / greatest(1, least(coalesce(p.concurrency_limit, p_max), p_max)))
    from wanted w
    where p.endpoint_id = w.endpoint_id and p.endpoint_id in (select locked.endpoint_id from locked)
  )
  select w.endpoint_id from wanted w where w.endpoint_id not in (select locked.endpoint_id from locked);
end
$fn$;
