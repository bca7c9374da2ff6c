-- An attach never fails a write.
--
-- 008 attached a partition under `share update exclusive` on the table whenever a partition
-- already held `p_from` (the maintenance's now), on the view that writers write rows of now and
-- so never route one to the default. A writer whose rows are of a day with no partition yet (a
-- clock ahead, the maintenance stopped for longer than `aheadDays`, a backfill) does: its
-- statement takes the table (which that mode lets it), routes the row to the default on the
-- partitions it saw and waits for the default, which the maintenance holds; once the attach
-- commits, the row is of the new partition's range and the insert fails with 23514 ("violates
-- partition constraint"), in the caller's transaction. Now every attach takes the table
-- `share row exclusive`: writes that started before it finish first (it waits for them at most
-- 100 ms, or gives up `busy`), writes after it wait for it to commit and see the new partition.
-- Reads go on. It happens only when a partition is missing: on a daily schedule, once a day for
-- each table, for the day `aheadDays` ahead.
create or replace function holdfast_history_prepare(p_table text, p_from timestamptz, p_to timestamptz, p_days integer)
returns table (partition text, action text)
language plpgsql volatile
set search_path from current
set lock_timeout = '100ms'
as $fn$
declare
  day timestamptz;
  made text;
  names text[] := '{}';
  moving boolean;
  missing boolean := false;
begin
  if p_table not in ('holdfast_events', 'holdfast_deliveries', 'holdfast_delivery_attempts') then
    raise exception 'not a history table: %', p_table using errcode = 'invalid_parameter_value';
  end if;
  -- Another maintenance of this schema running: it does the work.
  if not pg_try_advisory_xact_lock(hashtext(current_schema() || '.holdfast_history')) then
    return;
  end if;
  begin
    -- The look: the catalog, and whether the default holds a row (`access share`, which only a
    -- maintenance's own `access exclusive` waits for).
    execute format('select exists (select 1 from %I.%I)', current_schema(), p_table || '_default')
      into moving;
    day := holdfast_history_floor(p_from, p_days);
    while day < p_to and not missing loop
      -- A day no partition overlaps is one `holdfast_history_attach` makes.
      missing := not exists (
        select 1 from holdfast_history_partitions() h
        where h.parent = p_table and not h.is_default
          and h.from_at < day + p_days * interval '1 day' and h.to_at > day);
      day := day + p_days * interval '1 day';
    end loop;
    if not moving and not missing then
      return;
    end if;
    -- The endpoints (a deliveries partition's foreign key: attached, it adds to their triggers,
    -- dropped, it takes some away), the table, then its default partition: the lease's order.
    if p_table = 'holdfast_deliveries' then
      execute format('lock table only %I.holdfast_webhook_endpoints in %s mode', current_schema(),
                     case when moving then 'access exclusive' else 'share row exclusive' end);
    end if;
    if moving then
      execute format('lock table only %I.%I in access exclusive mode', current_schema(), p_table);
    else
      -- No writer may be writing: one whose statement started before the attach routes a row of
      -- a day being attached to the default, on the partitions it saw, and fails the default's
      -- new constraint after the attach commits.
      execute format('lock table only %I.%I in share row exclusive mode', current_schema(), p_table);
    end if;
    -- The default, which the attach and the rehoming lock anyway, taken here in the lease's order
    -- (the table first): an attached partition's range must hold no row of the default.
    execute format('lock table only %I.%I in access exclusive mode', current_schema(), p_table || '_default');
    if not moving then
      execute format('select exists (select 1 from %I.%I)', current_schema(), p_table || '_default')
        into moving;
      if moving then
        -- Rows came meanwhile: moving them takes the table before its default, next run.
        raise exception using errcode = 'lock_not_available';
      end if;
    end if;
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
    -- A reader or writer holds the table: nothing is made this run, the next one tries again.
    when lock_not_available then
      partition := null;
      action := 'busy';
      return next;
      return;
  end;
  return query select unnest(names), 'created'::text;
end
$fn$;
