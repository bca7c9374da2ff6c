-- A correctly signed inbound event is kept even when its JSON holds what jsonb refuses (U+0000,
-- lone surrogates; CONTRACT section 10): raw_body holds the exact bytes the sender signed, and
-- payload a sanitised view (those characters as U+FFFD) for queries and processing.
alter table holdfast_inbound_events add column if not exists raw_body bytea;
