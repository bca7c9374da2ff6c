-- The receiver now runs on @holdfast/webhook-verifier's toolkit: its durable inbox
-- (holdfast_webhook_inbox, created by webhook-verifier/002_inbox, applied before this file) takes
-- the place of holdfast_inbound_events, and its dedup and version tables take the place of the
-- inbox's unique key and of holdfast_inbound_resource_versions. Migrations 500, 510 and 530 stay
-- as they were applied; this one moves what they hold, then drops their tables.

-- Events received before migration 530 kept no signed bytes: their JSON text stands in.
insert into holdfast_webhook_inbox (
  id, scope, tenant, webhook_id, type, payload, body, status, resource, attempts,
  next_attempt_at, last_error, received_at, processed_at
)
select id, receiver, account_id, webhook_id, event_type, payload,
  coalesce(raw_body, convert_to(payload::text, 'UTF8')), status, resource_id, attempts,
  next_attempt_at, last_error, received_at, processed_at
from holdfast_inbound_events
on conflict do nothing;

-- Ids stay recorded for the toolkit's default 7 days from receipt (the inbox's unique key still
-- refuses an older id twice).
insert into holdfast_webhook_dedup (key, expires_at)
select receiver || ' ' || webhook_id, received_at + interval '7 days'
from holdfast_inbound_events
on conflict (key) do nothing;

-- Versions were kept per account as a sequence or an updatedAt; the toolkit keeps one number
-- per "<tenant> <resource>": the sequence, else updatedAt in milliseconds.
insert into holdfast_webhook_versions (resource, version)
select account_id || ' ' || resource_id,
  coalesce(sequence, (extract(epoch from updated_at) * 1000)::bigint)
from holdfast_inbound_resource_versions
where sequence is not null or updated_at is not null
on conflict (resource) do update
  set version = greatest(holdfast_webhook_versions.version, excluded.version);

-- GET /v1/inbound-events lists one tenant's events by received_at, either way, and by status:
-- the indexes for that are the verifier's own (@holdfast/webhook-verifier/003_inbox_by_tenant).

drop table holdfast_inbound_resource_versions;
drop table holdfast_inbound_events;
