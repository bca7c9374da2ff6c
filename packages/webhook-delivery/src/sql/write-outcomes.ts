/**
 * The outcome statement, held once, as a function (one round trip, plan pinned: see the package
 * README, "Plans"), re-applied like `LEASE_FUNCTION`. Called by `writeOutcomes` (`../outcomes.ts`)
 * with named arguments: one array per column of the batch, unnested into rows.
 *
 * Writes the attempt rows, each delivery's new state and lease release (only leases this worker
 * still owns), the success side of endpoint health, the places released in this worker's release
 * stripe, and the pacing row only where something changes (the AIMD limit or a `Retry-After`
 * pause), so in steady state no outcome statement touches the row lease statements lock.
 */
export const WRITE_OUTCOMES_FUNCTION = `
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
`;
