-- The inbox in time partitions: range-partitioned by received_at (a day each by default), so
-- retention drops whole partitions instead of deleting rows, and an old partition costs nothing
-- to the statements that read recent ones. Existing entries move to the new table.
--
-- PostgreSQL requires a unique index of a partitioned table to hold the partition key, so
-- `unique (scope, webhook_id)` cannot stay: duplicates are kept out by holdfast_webhook_dedup
-- (a plain table: its key serializes concurrent enqueues of one id), and once a record there
-- has expired, by a lookup of (scope, webhook_id) in the partitions still attached (an index
-- probe each: as many as retention keeps).
alter table holdfast_webhook_inbox rename to holdfast_webhook_inbox_unpartitioned;

create table holdfast_webhook_inbox (
  id text not null,
  scope text not null,
  tenant text,
  webhook_id text not null,
  type text,
  payload jsonb not null,
  body bytea not null,
  status text not null default 'pending'
    check (status in ('pending', 'processed', 'stale', 'ignored', 'failed')),
  resource text,
  attempts integer not null default 0,
  next_attempt_at timestamptz(3),
  last_error text,
  received_at timestamptz(3) not null default date_trunc('milliseconds', now()),
  processed_at timestamptz(3)
) partition by range (received_at);

-- Creates the partitions covering [p_from, p_to], each p_days wide and aligned on whole UTC
-- days; a range partly held by an existing partition (one made with another width) is cut to
-- the gap. A partition a concurrent caller made first is left as it is. Returns the names made.
create function holdfast_webhook_inbox_create_partitions(p_from timestamptz, p_to timestamptz, p_days integer)
returns setof text
language plpgsql volatile
-- The table beside the function, whatever the search_path of the statement that calls it.
set search_path from current
as $fn$
declare
  width interval;
  cur timestamptz;
  stop timestamptz;
  lo timestamptz;
  hi timestamptz;
  nxt timestamptz;
  name text;
begin
  if p_days is null or p_days < 1 then
    raise exception 'partition width must be at least one day' using errcode = '22023';
  end if;
  width := make_interval(days => p_days);
  cur := date_bin(width, p_from, timestamptz '2000-01-01 00:00:00+00');
  while cur <= p_to loop
    stop := cur + width;
    while cur < stop loop
      select b.lo, b.hi into lo, hi from holdfast_webhook_inbox_bounds() b
        where b.lo <= cur and cur < b.hi;
      if found then
        cur := hi;
        continue;
      end if;
      select min(b.lo) into nxt from holdfast_webhook_inbox_bounds() b where b.lo > cur;
      nxt := least(stop, coalesce(nxt, stop));
      name := 'holdfast_webhook_inbox_p' || to_char(cur at time zone 'UTC',
        case when cur = date_trunc('day', cur at time zone 'UTC') at time zone 'UTC'
          then 'YYYYMMDD' else 'YYYYMMDD"_"HH24MISS' end);
      begin
        execute format('create table %I partition of holdfast_webhook_inbox for values from (%L) to (%L)',
          name, cur, nxt);
        return next name;
      exception when duplicate_table or invalid_object_definition then
        -- Made by a concurrent caller since the look above: theirs stands.
        null;
      end;
      cur := nxt;
    end loop;
  end loop;
end
$fn$;

-- The partitions of the inbox with their bounds, oldest first.
create function holdfast_webhook_inbox_bounds()
returns table (name text, lo timestamptz, hi timestamptz)
language sql stable
set search_path from current
as $fn$
  select c.relname::text, m[1]::timestamptz, m[2]::timestamptz
  from pg_inherits i
  join pg_class c on c.oid = i.inhrelid
  cross join lateral regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \(''([^'']+)''\) TO \(''([^'']+)''\)') m
  where i.inhparent = 'holdfast_webhook_inbox'::regclass
  order by 2
$fn$;

-- Drops every partition wholly before p_before that holds no pending entry (one that was never
-- processed): whole tables, never a DELETE. One holding a pending entry stays, reported with
-- dropped = false. The inbox is locked first: dropping a partition needs its parent exclusively,
-- and taking the parent before the partitions keeps the order every reader takes.
create function holdfast_webhook_inbox_drop_partitions(p_before timestamptz)
returns table (name text, dropped boolean)
language plpgsql volatile
set search_path from current
as $fn$
declare
  part record;
  pending boolean;
begin
  if not exists (select 1 from holdfast_webhook_inbox_bounds() b where b.hi <= p_before) then
    return;
  end if;
  lock table holdfast_webhook_inbox in access exclusive mode;
  for part in select b.name from holdfast_webhook_inbox_bounds() b where b.hi <= p_before order by b.lo loop
    execute format('select exists (select 1 from %I where status = %L)', part.name, 'pending') into pending;
    if not pending then
      execute format('drop table %I', part.name);
    end if;
    name := part.name;
    dropped := not pending;
    return next;
  end loop;
end
$fn$;

-- The days existing entries were received on, and yesterday, today and the week ahead.
select count(*) from (
  select holdfast_webhook_inbox_create_partitions(day, day, 1)
  from (
    select distinct date_bin('1 day', received_at, timestamptz '2000-01-01 00:00:00+00') as day
    from holdfast_webhook_inbox_unpartitioned
  ) days
) made;
select count(*) from holdfast_webhook_inbox_create_partitions(now() - interval '1 day', now() + interval '7 days', 1);

insert into holdfast_webhook_inbox (id, scope, tenant, webhook_id, type, payload, body, status, resource,
  attempts, next_attempt_at, last_error, received_at, processed_at)
select id, scope, tenant, webhook_id, type, payload, body, status, resource,
  attempts, next_attempt_at, last_error, received_at, processed_at
from holdfast_webhook_inbox_unpartitioned;
drop table holdfast_webhook_inbox_unpartitioned;

-- Each index is made on every partition, present and future.
alter table holdfast_webhook_inbox add primary key (id, received_at);
create index holdfast_webhook_inbox_webhook_id on holdfast_webhook_inbox (scope, webhook_id);
create index holdfast_webhook_inbox_pending
  on holdfast_webhook_inbox (received_at, id) where status = 'pending';
create index holdfast_webhook_inbox_tenant_received on holdfast_webhook_inbox (tenant, received_at desc nulls last, id desc nulls last);
create index holdfast_webhook_inbox_tenant_received_asc on holdfast_webhook_inbox (tenant, received_at asc nulls last, id desc nulls last);
create index holdfast_webhook_inbox_tenant_status_received on holdfast_webhook_inbox (tenant, status, received_at desc nulls last, id desc nulls last);
