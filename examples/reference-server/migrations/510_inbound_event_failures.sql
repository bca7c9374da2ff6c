-- An inbound event whose processing fails no longer holds up the inbox: it is retried with a
-- growing delay (next_attempt_at) and, after a few attempts, set aside as 'failed' with the
-- error kept for operators (last_error). Before, one such event rolled back its whole batch on
-- every round, so nothing behind it was ever processed.
alter table holdfast_inbound_events
  add column if not exists next_attempt_at timestamptz(3),
  add column if not exists last_error text;

alter table holdfast_inbound_events drop constraint if exists holdfast_inbound_events_status_check;
alter table holdfast_inbound_events add constraint holdfast_inbound_events_status_check
  check (status in ('pending', 'processed', 'stale', 'ignored', 'failed'));
