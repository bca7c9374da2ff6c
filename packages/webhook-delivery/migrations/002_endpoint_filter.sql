-- Endpoints' payload filters (`filter`, a JSON object or null): the fan-out evaluates them with
-- `holdfast_filter_match` (migration 005) as it writes an event's deliveries.
alter table holdfast_webhook_endpoints
  add column filter jsonb check (filter is null or jsonb_typeof(filter) = 'object');
