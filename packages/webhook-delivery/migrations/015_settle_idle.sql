-- The repair locks only the turns it may move, so the workers can run it every half second.
--
-- An endpoint whose turn has come but that has nothing to lease now (its work all leased or
-- retrying later, none queued, or an endpoint just made) is visited by every lease round, for a
-- few index probes, until the repair moves its turn later. Run with the recount every ten
-- seconds, that was every endpoint served in the last ten seconds that went idle, and every
-- endpoint made since the worker started: each round walked them all. The repair locked every
-- turn that had come `for update`, those of endpoints with work too, and a writer's `for key
-- share` check of such a turn waited for it: run often, it would hold back writes to the busiest
-- endpoints. It now finds, without a lock, the turns that have come of endpoints with nothing
-- leasable now (the lease's two probes, read-only), locks only those (`for update skip locked`),
-- and then, with a snapshot taken after the lock, reads what is queued and moves a turn only if
-- there is still nothing to lease: a writer that committed in between is seen, and one after the
-- lock finds the turn later and appends a wake.
create or replace function holdfast_queue_settle(p_at timestamptz, p_limit integer)
returns integer
language plpgsql volatile
set search_path from current
set enable_seqscan = off
set enable_bitmapscan = off
set jit = off
as $fn$
declare
  idle text[];
  locked text[];
  moved integer;
begin
  select array_agg(r.endpoint_id) into idle from (
    select r.endpoint_id from holdfast_endpoint_queue r
    where r.turn <= p_at
    order by r.turn, r.shuffle
    limit p_limit) r
  where (not exists (
      select 1 from holdfast_delivery_queue q
      where q.endpoint_id = r.endpoint_id and q.lease_expires_at is null
        and q.next_attempt_at is not null and q.next_attempt_at <= p_at)
    and not exists (
      select 1 from holdfast_delivery_queue q
      where q.endpoint_id = r.endpoint_id and q.lease_expires_at <= p_at and q.next_attempt_at <= p_at))
    or not exists (
      select 1 from holdfast_webhook_endpoints e
      where e.id = r.endpoint_id and e.status = 'active' and e.deleted_at is null);
  if idle is null then
    return 0;
  end if;
  select array_agg(l.endpoint_id) into locked from (
    select r.endpoint_id from holdfast_endpoint_queue r
    where r.endpoint_id = any(idle) and r.turn <= p_at
    order by r.endpoint_id
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
