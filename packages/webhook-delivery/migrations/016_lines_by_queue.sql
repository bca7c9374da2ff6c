-- An ordered line's unfinished deliveries are found in the queue, so the outbox write, the
-- ordering trigger and the repair of waiting lines plan and lock one history partition, not all.
--
-- Each of them looked for a line's unfinished deliveries in `holdfast_deliveries`, by endpoint
-- and resource: a key that does not carry the partition key, so the statement was planned over
-- every partition of the history (a month's days and the week ahead) and locked each. The
-- fan-out is a plain statement, planned on every call: with a filled history its planning alone
-- cost several times its execution, for every event, ordered endpoints or not, and an exclusive
-- lock on any old partition (an operator moving or repacking it) held up every event written.
-- The queue holds exactly the unfinished deliveries with their line and `created_at`, so the
-- line is read there and each delivery row is then reached by its id and `created_at`, by an
-- `execute` of a statement holding those values as literals, planned with them: one partition,
-- pruned before it is opened (a cached generic plan would lock every partition each time it
-- ran). Literals, not `using` and numbered parameters: an adapter that binds numbered
-- placeholders found in a statement's text, as the Drizzle one does, would bind them here too.
-- The queue is one table, so its reads keep the plans the session cached: planning every
-- statement on every call cost ordered endpoints much of their rate. These lookups never name
-- the unfinished statuses: the partial index of unfinished deliveries by `created_at` (migration
-- 007) would then tie with the primary key in a partition not yet analyzed (a day's new one), and
-- win, reading every delivery created in the same millisecond (one event's fan-out, a batch) to
-- find one.

-- Whether the line of `p_key` at `p_endpoint` has an unfinished delivery: the fan-out's, a
-- replay's and a recovery's check before a delivery joins the line due. The delivery found is
-- locked `for key share`, which reads its newest version: one that finished after the caller's
-- snapshot counts as finished (one finishing before the caller commits is left to the workers'
-- repair of waiting lines, `holdfast_queue_resume_lines`). Queue rows are read without a lock,
-- before any delivery row, so the lock order of migration 009 holds.
create function holdfast_line_unfinished(p_endpoint text, p_key text)
returns boolean
language plpgsql volatile
set search_path from current
set enable_seqscan = off
set enable_bitmapscan = off
set enable_sort = off
set jit = off
as $fn$
declare
  q record;
  state text;
begin
  for q in
    select u.delivery_id, u.created_at from holdfast_delivery_queue u
    where u.endpoint_id = p_endpoint and u.ordering_key = p_key
    order by u.ordering_pos
  loop
    execute format('select x.status from holdfast_deliveries x
                    where x.id = %L and x.created_at = %L::timestamptz for key share',
                   q.delivery_id, q.created_at)
      into state;
    if state in ('pending', 'failed') then
      return true;
    end if;
  end loop;
  return false;
end
$fn$;

-- Makes the line's next unfinished delivery due when one finishes, as before: its head is the
-- lowest place among the line's other queue rows (the finished one's own is deleted by the queue
-- trigger, which fires after this one) whose delivery is still unfinished. The queue row says
-- whether that delivery waits, so one that is due already is not written; one that finished in
-- the same statement (its queue row not yet deleted) is passed over.
create or replace function holdfast_ordering_next() returns trigger
language plpgsql volatile
set search_path from current
set enable_seqscan = off
set enable_bitmapscan = off
set enable_sort = off
set jit = off
as $fn$
declare
  q record;
  written integer;
begin
  for q in
    select u.delivery_id, u.created_at, u.next_attempt_at from holdfast_delivery_queue u
    where u.endpoint_id = new.endpoint_id and u.ordering_key = new.ordering_key and u.delivery_id <> new.id
    order by u.ordering_pos
  loop
    if q.next_attempt_at is not null then
      return null;
    end if;
    execute format('update holdfast_deliveries d
                    set next_attempt_at = coalesce(d.next_attempt_at, %L::timestamptz)
                    where d.id = %L and d.created_at = %L::timestamptz
                      and d.status not in (''succeeded'', ''dead'')',
                   new.updated_at, q.delivery_id, q.created_at);
    get diagnostics written = row_count;
    if written > 0 then
      return null;
    end if;
  end loop;
  return null;
end
$fn$;

-- The workers' repair of waiting lines: makes due the head of every line that waits with nothing
-- ahead of it (a delivery created behind one that finished while its creating statement ran,
-- after the finishing outcome's trigger looked for the next one). Each line is visited once, by
-- a skip scan of the queue's line index (one probe per line, never per delivery waiting); only a
-- head that waits is then read and written in its partition. Answers how many it made due.
create function holdfast_queue_resume_lines()
returns integer
language plpgsql volatile
set search_path from current
set enable_seqscan = off
set enable_bitmapscan = off
set enable_sort = off
set jit = off
as $fn$
declare
  h record;
  written integer;
  resumed integer := 0;
begin
  for h in
    with recursive line as (
      (select u.endpoint_id, u.ordering_key from holdfast_delivery_queue u
       where u.ordering_key is not null
       order by u.endpoint_id, u.ordering_key limit 1)
      union all
      select n.endpoint_id, n.ordering_key from line l cross join lateral (
        select u.endpoint_id, u.ordering_key from holdfast_delivery_queue u
        where u.ordering_key is not null and (u.endpoint_id, u.ordering_key) > (l.endpoint_id, l.ordering_key)
        order by u.endpoint_id, u.ordering_key limit 1) n
    )
    select head.delivery_id, head.created_at from line l cross join lateral (
      select u.delivery_id, u.created_at, u.next_attempt_at from holdfast_delivery_queue u
      where u.endpoint_id = l.endpoint_id and u.ordering_key = l.ordering_key
      order by u.ordering_pos limit 1) head
    where head.next_attempt_at is null
  loop
    execute format('update holdfast_deliveries d set next_attempt_at = d.created_at
                    where d.id = %L and d.created_at = %L::timestamptz
                      and d.status not in (''succeeded'', ''dead'') and d.next_attempt_at is null',
                   h.delivery_id, h.created_at);
    get diagnostics written = row_count;
    resumed := resumed + written;
  end loop;
  return resumed;
end
$fn$;
