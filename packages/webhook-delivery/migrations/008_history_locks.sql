-- The history maintenance without deadlocks, and without holding anything back when there is
-- nothing to do.
--
-- Every other statement on a history table (the lease, which reads deliveries then events, the
-- fan-out of an event, outcomes, replays, reads) locks the partitioned table first and its
-- partitions after, the default partition among them. The maintenance of 007 locked the default
-- partition first (`access exclusive`) and the table after (to detach the default and make a
-- new one): the opposite order, so a lease or a write holding the table and waiting for the
-- default, beside a maintenance holding the default and waiting for the table, was a deadlock
-- whose victim was as often the worker as the maintenance. And it took that lock on every run,
-- even with nothing to move or make.
--
-- A deliveries partition also carries the foreign key to the endpoints: attaching one locks the
-- endpoints `share row exclusive`, dropping one `access exclusive`, and the lease holds the
-- endpoints while it waits for deliveries. 007 took those after the deliveries' locks.
--
-- Now `holdfast_history_prepare` (which `holdfast_history_ensure` calls) first looks, taking no
-- lock that holds back anything but another maintenance: when the partitions of [p_from, p_to)
-- exist and the default partition is empty (the usual run) it is done. Otherwise it takes every
-- lock the work needs at once, before the work, in the order the lease does: the endpoints (for
-- deliveries), then the table, in the weakest mode the work needs, then its default partition:
-- `access exclusive` on the table to move rows out of the default (the default is detached and
-- made again), `share row exclusive` when no partition holds `p_from` (writers of that time must
-- finish before a partition takes it), else `share update exclusive` (what attaching takes on
-- the table anyway: reads and writes go on). Rows that reached the default after the look are
-- left for the next run (moving them would need the table after its default). Retention locks
-- the endpoints and the table before a partition's detach likewise. Every lock is waited for at
-- most 100 ms, far below `deadlock_timeout` (1 s by default): a statement that takes these
-- tables in another order (a write takes the deliveries before the endpoints' key) and meets
-- the maintenance in a cycle waits longer than that before PostgreSQL looks for the cycle, so
-- the maintenance has given up first, said so (`busy`), and the caller tries again soon.
--
-- A new database has no partition of a day yet (007 made them for existing rows only): its first
-- maintenance makes them, best run before the workers start, so its locks meet none of theirs;
-- later runs find them made, and take no lock, until the days ahead need more.

-- Makes sure history table `p_table` has partitions of `p_days` days covering [p_from, p_to),
-- after moving any rows of its default partition into partitions of their own. One table a call
-- (one table's locks a transaction), one maintenance at a time per schema (an advisory lock; a
-- second one does nothing). Returns one row per partition made (`created`), or one row `busy`
-- (partition null) when a lock was not had in time: nothing is made, the next run tries again.
create function holdfast_history_prepare(p_table text, p_from timestamptz, p_to timestamptz, p_days integer)
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
  covered boolean;
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
    covered := exists (
      select 1 from holdfast_history_partitions() h
      where h.parent = p_table and not h.is_default and h.from_at <= p_from and h.to_at > p_from);
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
    elsif not covered then
      -- Writers of `p_from`'s time route rows to the default, and one that routed a row before
      -- the attach would fail the default's new constraint after it: none may be writing.
      execute format('lock table only %I.%I in share row exclusive mode', current_schema(), p_table);
    else
      execute format('lock table only %I.%I in share update exclusive mode', current_schema(), p_table);
    end if;
    -- No row lands in the default partition meanwhile (rows of other partitions go on being
    -- written): an attached partition's range must hold no row of the default.
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

-- As 007's, by `holdfast_history_prepare`: the partitions made (none when busy).
create or replace function holdfast_history_ensure(p_table text, p_from timestamptz, p_to timestamptz, p_days integer)
returns setof text
language sql volatile
set search_path from current
as $fn$
  select p.partition from holdfast_history_prepare(p_table, p_from, p_to, p_days) p
  where p.action = 'created'
$fn$;

-- Drops the partitions of history table `p_table` wholly older than `p_before`, each detached
-- then dropped, never a row deleted; one table a call, as `holdfast_history_prepare`. Returns
-- one row per partition looked at: `dropped`, or `kept` with why.
-- A deliveries partition holding an unfinished delivery (pending or failed: due, waiting or
-- leased) is kept; an events partition is kept while any delivery of its time range is left
-- (a kept delivery still needs its event's payload); an attempts partition is kept while it
-- holds an attempt of an unfinished delivery. Called for deliveries first, so their events can
-- go in the same run. Before a detach the endpoints (for deliveries) and the table are locked
-- (`access exclusive`, which the drop and the detach take), before the partitions the detach
-- locks after them; each partition is checked again
-- after it is detached (no replay or recovery can bring one back meanwhile); a partition whose
-- lock is not had in time is left for the next run (`kept: busy`).
create or replace function holdfast_history_expire(p_table text, p_before timestamptz)
returns table (partition text, action text)
language plpgsql volatile
set search_path from current
set lock_timeout = '100ms'
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
      -- The locks the detach and the drop take, first, in the lease's order (see the top).
      if h.parent = 'holdfast_deliveries' then
        execute format('lock table only %I.holdfast_webhook_endpoints in access exclusive mode', current_schema());
      end if;
      execute format('lock table only %I.%I in access exclusive mode', current_schema(), h.parent);
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
