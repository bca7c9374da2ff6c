-- The durable inbox: every verified event, its exact bytes and a JSON view, processed in the
-- background with retries and failure records. One row per event of a scope (a receiver): the
-- unique key is the second line of deduplication behind holdfast_webhook_dedup, so even an id
-- whose record expired is stored once.
create table if not exists holdfast_webhook_inbox (
  id text primary key,
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
  processed_at timestamptz(3),
  unique (scope, webhook_id)
);
create index if not exists holdfast_webhook_inbox_pending
  on holdfast_webhook_inbox (received_at, id) where status = 'pending';
