-- Ordered delivery per resource (opt-in per endpoint). An endpoint's `ordering` says whether its
-- deliveries of one resource go one at a time; a delivery records its line when it is created:
-- `ordering_key` (the event's resource id; null for an unordered endpoint) and `ordering_pos`, its
-- place in that line (from one sequence, taken under the resource's sequence row lock, so places
-- follow the events' order and a replayed delivery joins the back of its line).
--
-- `holdfast_deliveries_ordered` finds a line's head (its lowest unfinished place) with one index
-- probe; `holdfast_deliveries_ordered_in_flight` holds at most one leased delivery per line, so
-- no two workers ever send two of one line at once (as pg-boss's FIFO queues do with a partial
-- unique index). Both are partial: unordered deliveries have no entry in either.
--
-- A delivery created behind an unfinished one of its line waits with no `next_attempt_at`, so
-- lease rounds never pass over it; when the one before it finishes (succeeded or dead), the
-- trigger makes the line's next one due at that instant. The trigger's condition reads only the
-- updated row: an unordered delivery never calls it.
alter table holdfast_webhook_endpoints
  add column ordering text not null default 'none' check (ordering in ('none', 'per-resource'));
alter table holdfast_deliveries add column ordering_key text, add column ordering_pos bigint;
create sequence holdfast_delivery_order as bigint;
create index holdfast_deliveries_ordered
  on holdfast_deliveries (endpoint_id, ordering_key, ordering_pos)
  where ordering_key is not null and status in ('pending', 'failed');
create unique index holdfast_deliveries_ordered_in_flight
  on holdfast_deliveries (endpoint_id, ordering_key)
  where ordering_key is not null and lease_expires_at is not null;
create function holdfast_ordering_next() returns trigger
language plpgsql volatile
-- The table beside the function, whatever the search_path of the statement that fires it.
set search_path from current
set enable_seqscan = off
set enable_bitmapscan = off
set enable_sort = off
as $fn$
begin
  update holdfast_deliveries d set next_attempt_at = new.updated_at
  where d.id = (
      select x.id from holdfast_deliveries x
      where x.endpoint_id = new.endpoint_id and x.ordering_key = new.ordering_key
        and x.status in ('pending', 'failed')
      order by x.ordering_pos
      limit 1)
    and d.next_attempt_at is null;
  return null;
end
$fn$;
create trigger holdfast_deliveries_ordering_next
  after update of status on holdfast_deliveries
  for each row
  when (new.ordering_key is not null and new.status in ('succeeded', 'dead') and old.status in ('pending', 'failed'))
  execute function holdfast_ordering_next();
