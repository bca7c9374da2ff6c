-- History in time partitions. Events, deliveries and attempts become tables partitioned by range
-- of `created_at` (one partition per day unless the maintenance is told otherwise, named
-- `<table>_pYYYYMMDD` after the UTC day it starts), each with a default partition
-- (`<table>_default`) so no insert ever fails for want of a partition. Retention drops whole
-- partitions (`holdfast_history_expire`): never a DELETE of history.
--
-- A key of a partitioned table must hold the partition key: primary keys are `(id, created_at)`
-- and the one delivery per (event, endpoint) is `(event_id, endpoint_id, created_at)` (a
-- delivery is written in the statement that writes its event, with its event's `created_at`).
-- The foreign keys between the history tables are gone (a partition could not be dropped while
-- another table's rows pointed into it); integrity holds by how rows are written and dropped
-- instead: a delivery is only written with its event, an attempt only for a leased delivery, and
-- an events partition is dropped only when no delivery of its time range is left. Deliveries
-- keep their foreign key to endpoints (a plain table).
--
-- The one-leased-delivery-per-line unique index cannot hold across partitions (a line spans
-- days); the lease takes only a line's head, and the queue of unfinished work, where there is
-- one, holds that index instead.
--
-- New delivery ids carry their creation time: `dlv_` and a UUIDv7 in hex (48 bits of Unix
-- milliseconds, version 7, random bits), so a read of one delivery by id finds its partition
-- (`holdfast_delivery_created_at`). Older ids (UUIDv4, version 4) carry none and are looked up
-- in every partition.
--
-- Existing rows are copied into partitions of their days, the old tables dropped and their
-- triggers made again on the partitioned tables (a trigger on a partitioned table fires for
-- each of its partitions).

-- When a delivery id says it was made, to the millisecond; null for ids that do not say.
create function holdfast_delivery_created_at(p_id text)
returns timestamptz
language sql immutable strict parallel safe
as $fn$
  select case when p_id ~ '^dlv_[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$'
    then timestamptz 'epoch' + ('x' || lpad(substr(p_id, 5, 12), 16, '0'))::bit(64)::bigint * interval '1 millisecond'
  end
$fn$;

-- The start of the partition of `p_days` days (aligned on the Unix epoch, in UTC) holding `p_at`.
create function holdfast_history_floor(p_at timestamptz, p_days integer)
returns timestamptz
language sql immutable strict parallel safe
as $fn$
  select timestamptz 'epoch'
    + floor(extract(epoch from p_at) / (p_days * 86400))::bigint * p_days * interval '1 day'
$fn$;

-- The partitions of the history tables: each one's parent, name and bounds (null for the
-- default partition).
create function holdfast_history_partitions()
returns table (parent text, partition text, from_at timestamptz, to_at timestamptz, is_default boolean)
language sql stable
set search_path from current
as $fn$
  select p.relname::text, c.relname::text,
         (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \(''([^'']+)''\)'))[1]::timestamptz,
         (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \(''([^'']+)''\)'))[1]::timestamptz,
         pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT'
  from pg_inherits i
  join pg_class p on p.oid = i.inhparent
  join pg_class c on c.oid = i.inhrelid
  where p.relnamespace = current_schema()::regnamespace
    and p.relname in ('holdfast_events', 'holdfast_deliveries', 'holdfast_delivery_attempts')
  order by 1, 3 nulls first
$fn$;

-- Makes `p_parent`'s partition [p_from, p_to) unless one overlaps it; returns its name or null.
-- Created beside the table and attached (which locks the parent less than `partition of`).
create function holdfast_history_attach(p_parent text, p_from timestamptz, p_to timestamptz)
returns text
language plpgsql volatile
set search_path from current
as $fn$
declare
  name text := p_parent || '_p' || to_char(p_from at time zone 'UTC', 'YYYYMMDD');
begin
  if exists (
    select 1 from holdfast_history_partitions() h
    where h.parent = p_parent and not h.is_default and h.from_at < p_to and h.to_at > p_from
  ) or to_regclass(quote_ident(current_schema()) || '.' || quote_ident(name)) is not null then
    return null;
  end if;
  execute format('create table %I.%I (like %I.%I including defaults including constraints)',
                 current_schema(), name, current_schema(), p_parent);
  execute format('alter table %I.%I attach partition %I.%I for values from (%L) to (%L)',
                 current_schema(), p_parent, current_schema(), name, p_from, p_to);
  return name;
end
$fn$;

-- Moves the rows of `p_parent`'s default partition (written while no partition of their time
-- existed) into partitions of `p_days` days: the default is detached, partitions made for its
-- rows' times, its rows copied through the parent, and it is replaced by an empty one. Returns
-- the partitions made. Usually the default is empty and this only looks.
create function holdfast_history_rehome(p_parent text, p_days integer)
returns setof text
language plpgsql volatile
set search_path from current
as $fn$
declare
  def text := p_parent || '_default';
  moving text := p_parent || '_rehoming';
  day timestamptz;
  made text;
begin
  execute format('select exists (select 1 from %I.%I)', current_schema(), def) into strict made;
  if not made::boolean then
    return;
  end if;
  execute format('alter table %I.%I detach partition %I.%I', current_schema(), p_parent, current_schema(), def);
  execute format('alter table %I.%I rename to %I', current_schema(), def, moving);
  for day in execute format('select distinct holdfast_history_floor(created_at, %s) from %I.%I order by 1',
                            p_days, current_schema(), moving) loop
    made := holdfast_history_attach(p_parent, day, day + p_days * interval '1 day');
    if made is not null then
      return next made;
    end if;
  end loop;
  execute format('create table %I.%I partition of %I.%I default', current_schema(), def, current_schema(), p_parent);
  execute format('insert into %I.%I select * from %I.%I', current_schema(), p_parent, current_schema(), moving);
  execute format('drop table %I.%I', current_schema(), moving);
end
$fn$;

-- Makes sure history table `p_table` has partitions of `p_days` days covering [p_from, p_to),
-- after moving any rows of its default partition into partitions of their own. One table a call
-- (a transaction locks one table's partitions only, so it never waits in a cycle with writers
-- and readers of several), one maintenance at a time per schema (an advisory lock; a second
-- one does nothing). Returns the partitions made.
create function holdfast_history_ensure(p_table text, p_from timestamptz, p_to timestamptz, p_days integer)
returns setof text
language plpgsql volatile
set search_path from current
set lock_timeout = '2s'
as $fn$
declare
  day timestamptz;
  made text;
  names text[] := '{}';
begin
  if p_table not in ('holdfast_events', 'holdfast_deliveries', 'holdfast_delivery_attempts') then
    raise exception 'not a history table: %', p_table using errcode = 'invalid_parameter_value';
  end if;
  -- Another maintenance of this schema running: it does the work.
  if not pg_try_advisory_xact_lock(hashtext(current_schema() || '.holdfast_history')) then
    return;
  end if;
  begin
    -- No partition holds `p_from` yet (the first run, or a clock moved): writers of that time
    -- are routing rows to the default partition, and a statement that routed one before the
    -- attach would fail the default's new constraint after it. So none may be writing: wait
    -- for those that are, hold back new ones until this commits. Partitions made ahead of
    -- their time need no such lock.
    if not exists (
      select 1 from holdfast_history_partitions() h
      where h.parent = p_table and not h.is_default and h.from_at <= p_from and h.to_at > p_from
    ) then
      execute format('lock table %I.%I in share row exclusive mode', current_schema(), p_table);
    end if;
    -- No row lands in the default partition meanwhile (rows of other partitions go on being
    -- written): an attached partition's range must hold no row of the default.
    execute format('lock table %I.%I in access exclusive mode', current_schema(), p_table || '_default');
    names := array(select holdfast_history_rehome(p_table, p_days));
    day := holdfast_history_floor(p_from, p_days);
    while day < p_to loop
      made := holdfast_history_attach(p_table, day, day + p_days * interval '1 day');
      if made is not null then
        names := names || made;
      end if;
      day := day + p_days * interval '1 day';
    end loop;
  exception
    -- A long read holds the table: nothing is made this run, the next one tries again.
    when lock_not_available then
      names := '{}';
  end;
  return query select unnest(names);
end
$fn$;

-- Drops the partitions of history table `p_table` wholly older than `p_before`, each detached
-- then dropped, never a row deleted; one table a call, as `holdfast_history_ensure`. Returns one row per partition looked at: `dropped`, or `kept` with why.
-- A deliveries partition holding an unfinished delivery (pending or failed: due, waiting or
-- leased) is kept; an events partition is kept while any delivery of its time range is left
-- (a kept delivery still needs its event's payload); an attempts partition is kept while it
-- holds an attempt of an unfinished delivery. Called for deliveries first, so their events can
-- go in the same run. Each partition is checked again after it is detached (under the parent's lock, so
-- no replay or recovery can bring one back meanwhile); a partition whose lock is not had in
-- time is left for the next run.
create function holdfast_history_expire(p_table text, p_before timestamptz)
returns table (partition text, action text)
language plpgsql volatile
set search_path from current
set lock_timeout = '2s'
as $fn$
declare
  h record;
  busy boolean;
  check_sql text;
begin
  -- Another maintenance of this schema running: it does the work.
  if not pg_try_advisory_xact_lock(hashtext(current_schema() || '.holdfast_history')) then
    return;
  end if;
  for h in
    select x.parent, x.partition, x.from_at, x.to_at from holdfast_history_partitions() x
    where x.parent = p_table and not x.is_default and x.to_at <= p_before
    order by x.from_at
  loop
    check_sql := case h.parent
      when 'holdfast_deliveries' then format(
        'select exists (select 1 from %I.%I d where d.status in (''pending'', ''failed''))',
        current_schema(), h.partition)
      when 'holdfast_events' then format(
        'select exists (select 1 from %I.holdfast_deliveries d where d.created_at >= %L and d.created_at < %L)',
        current_schema(), h.from_at, h.to_at)
      else format(
        'select exists (select 1 from %I.holdfast_deliveries d where d.status in (''pending'', ''failed'') and d.created_at < %L
           and exists (select 1 from %I.%I a where a.delivery_id = d.id))',
        current_schema(), h.to_at, current_schema(), h.partition)
    end;
    execute check_sql into busy;
    if busy then
      partition := h.partition;
      action := 'kept: unfinished';
      return next;
      continue;
    end if;
    begin
      execute format('alter table %I.%I detach partition %I.%I',
                     current_schema(), h.parent, current_schema(), h.partition);
      execute check_sql into busy;
      if busy then
        raise exception using errcode = 'HF001';
      end if;
      execute format('drop table %I.%I', current_schema(), h.partition);
      partition := h.partition;
      action := 'dropped';
    exception
      when sqlstate 'HF001' then
        partition := h.partition;
        action := 'kept: unfinished';
      when lock_not_available then
        partition := h.partition;
        action := 'kept: busy';
    end;
    return next;
  end loop;
end
$fn$;

-- The conversion. The old tables' triggers, to make again once the partitioned tables have
-- their names.
create temporary table holdfast_history_triggers as
  select pg_get_triggerdef(t.oid) as def
  from pg_trigger t
  where t.tgrelid in ('holdfast_events'::regclass, 'holdfast_deliveries'::regclass,
                      'holdfast_delivery_attempts'::regclass)
    and not t.tgisinternal;

alter table holdfast_events rename to holdfast_events_unpartitioned;
alter table holdfast_deliveries rename to holdfast_deliveries_unpartitioned;
alter table holdfast_delivery_attempts rename to holdfast_delivery_attempts_unpartitioned;

create table holdfast_events
  (like holdfast_events_unpartitioned including defaults including constraints)
  partition by range (created_at);
create table holdfast_deliveries
  (like holdfast_deliveries_unpartitioned including defaults including constraints)
  partition by range (created_at);
create table holdfast_delivery_attempts
  (like holdfast_delivery_attempts_unpartitioned including defaults including constraints)
  partition by range (created_at);
create table holdfast_events_default partition of holdfast_events default;
create table holdfast_deliveries_default partition of holdfast_deliveries default;
create table holdfast_delivery_attempts_default partition of holdfast_delivery_attempts default;

-- Daily partitions for the days the existing rows were written. The days ahead are the
-- maintenance's to make (until its first run, new rows wait in the default partitions, and that
-- run moves them into partitions of their days).
do $convert$
declare
  t text;
  day timestamptz;
begin
  foreach t in array array['holdfast_events', 'holdfast_deliveries', 'holdfast_delivery_attempts'] loop
    for day in execute format(
      'select distinct holdfast_history_floor(created_at, 1) from %I.%I',
      current_schema(), t || '_unpartitioned') loop
      perform holdfast_history_attach(t, day, day + interval '1 day');
    end loop;
  end loop;
end
$convert$;

insert into holdfast_events select * from holdfast_events_unpartitioned;
insert into holdfast_deliveries select * from holdfast_deliveries_unpartitioned;
insert into holdfast_delivery_attempts select * from holdfast_delivery_attempts_unpartitioned;
drop table holdfast_delivery_attempts_unpartitioned;
drop table holdfast_deliveries_unpartitioned;
drop table holdfast_events_unpartitioned;

alter table holdfast_events add primary key (id, created_at);
create index holdfast_events_list
  on holdfast_events (account_id, created_at desc nulls last, id desc nulls last);
create index holdfast_events_list_asc
  on holdfast_events (account_id, created_at asc nulls last, id desc nulls last);

alter table holdfast_deliveries
  add primary key (id, created_at),
  add unique (event_id, endpoint_id, created_at),
  add foreign key (endpoint_id) references holdfast_webhook_endpoints (id) on delete cascade;
create index holdfast_deliveries_due
  on holdfast_deliveries (next_attempt_at) where status in ('pending', 'failed');
create index holdfast_deliveries_endpoint_next
  on holdfast_deliveries (endpoint_id, next_attempt_at, id) where status in ('pending', 'failed');
create index holdfast_deliveries_endpoint_live
  on holdfast_deliveries (endpoint_id) where lease_expires_at is not null;
create index holdfast_deliveries_list
  on holdfast_deliveries (account_id, created_at desc nulls last, id desc nulls last);
create index holdfast_deliveries_list_asc
  on holdfast_deliveries (account_id, created_at asc nulls last, id desc nulls last);
create index holdfast_deliveries_endpoint_list
  on holdfast_deliveries (account_id, endpoint_id, created_at desc nulls last, id desc nulls last);
create index holdfast_deliveries_ordered
  on holdfast_deliveries (endpoint_id, ordering_key, ordering_pos)
  where ordering_key is not null and status in ('pending', 'failed');
create index holdfast_deliveries_ordered_in_flight
  on holdfast_deliveries (endpoint_id, ordering_key)
  where ordering_key is not null and lease_expires_at is not null;
create index holdfast_deliveries_status_asc
  on holdfast_deliveries (account_id, (array_position(array['pending', 'succeeded', 'failed', 'dead']::text[], status::text)) asc nulls last, id desc nulls last);
create index holdfast_deliveries_status_desc
  on holdfast_deliveries (account_id, (array_position(array['pending', 'succeeded', 'failed', 'dead']::text[], status::text)) desc nulls last, id desc nulls last);
create index holdfast_deliveries_status_asc_created_asc
  on holdfast_deliveries (account_id, (array_position(array['pending', 'succeeded', 'failed', 'dead']::text[], status::text)) asc nulls last, created_at asc nulls last, id desc nulls last);
create index holdfast_deliveries_status_asc_created_desc
  on holdfast_deliveries (account_id, (array_position(array['pending', 'succeeded', 'failed', 'dead']::text[], status::text)) asc nulls last, created_at desc nulls last, id desc nulls last);
create index holdfast_deliveries_status_desc_created_asc
  on holdfast_deliveries (account_id, (array_position(array['pending', 'succeeded', 'failed', 'dead']::text[], status::text)) desc nulls last, created_at asc nulls last, id desc nulls last);
create index holdfast_deliveries_status_desc_created_desc
  on holdfast_deliveries (account_id, (array_position(array['pending', 'succeeded', 'failed', 'dead']::text[], status::text)) desc nulls last, created_at desc nulls last, id desc nulls last);
-- The unfinished deliveries by time: what retention asks of a partition before it drops it.
create index holdfast_deliveries_unfinished
  on holdfast_deliveries (created_at) where status in ('pending', 'failed');

alter table holdfast_delivery_attempts add primary key (id, created_at);
create index holdfast_delivery_attempts_list
  on holdfast_delivery_attempts (delivery_id, created_at desc nulls last, id desc nulls last);
create index holdfast_delivery_attempts_endpoint_time
  on holdfast_delivery_attempts (endpoint_id, created_at);

do $triggers$
declare
  def text;
begin
  for def in select t.def from holdfast_history_triggers t loop
    execute def;
  end loop;
end
$triggers$;
drop table holdfast_history_triggers;
