-- A round applies the wakes of up to `p_limit` endpoints, not of the first `p_limit` wake rows.
-- Every delivery made leasable before its endpoint's turn appends a wake (no key: writers never
-- wait for each other), so a burst of events to endpoints that had gone idle leaves one wake per
-- delivery: 100 events to 1,000 endpoints are 100,000 wakes. Read in index order, the first
-- `p_limit` rows named a handful of endpoints (512 rows, 5 of them), and a round could only serve
-- those: the other endpoints waited for a round each handful. Now the distinct endpoints are
-- found with one index probe each (a skip scan), and every wake of each is applied and deleted.
create or replace function holdfast_queue_wakes(p_limit integer)
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
  with recursive distinct_wakes (endpoint_id, n) as (
    (select x.endpoint_id, 1 from holdfast_endpoint_wakes x order by x.endpoint_id limit 1)
    union all
    select (select x.endpoint_id from holdfast_endpoint_wakes x
            where x.endpoint_id > d.endpoint_id order by x.endpoint_id limit 1),
           d.n + 1
    from distinct_wakes d
    where d.endpoint_id is not null and d.n < p_limit
  )
  select array_agg(d.endpoint_id) into waking from distinct_wakes d where d.endpoint_id is not null;
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
