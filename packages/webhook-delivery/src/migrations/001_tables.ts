/**
 * The sender's tables as the idempotent DDL of version 0.1 created them, kept `if not exists` so a database created by that DDL takes this migration as a no-op.
 * Timestamps are `timestamptz(3)` so a cursor carries exactly the value compared.
 */
export const tables: { readonly id: string; readonly sql: string } = {
  id: 'webhook-delivery/001_tables',
  sql: `
create table if not exists holdfast_webhook_endpoints (
  id text primary key,
  account_id text not null,
  url text not null,
  description text,
  event_types text[] not null default '{}',
  status text not null default 'active' check (status in ('active', 'disabled')),
  secret text not null,
  previous_secret text,
  previous_secret_expires_at timestamptz(3),
  failing_since timestamptz(3),
  disable_warned_at timestamptz(3),
  disabled_reason text,
  deleted_at timestamptz(3),
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null
);
create index if not exists holdfast_webhook_endpoints_list
  on holdfast_webhook_endpoints (account_id, created_at desc nulls last, id desc nulls last);

create table if not exists holdfast_resource_sequences (
  resource_id text primary key,
  sequence bigint not null
);

create table if not exists holdfast_events (
  id text primary key,
  account_id text not null,
  type text not null,
  resource_id text not null,
  sequence bigint not null,
  payload text not null,
  created_at timestamptz(3) not null
);
create index if not exists holdfast_events_list
  on holdfast_events (account_id, created_at desc nulls last, id desc nulls last);
-- Oldest first, for consumers catching up on missed events (sort=createdAt).
create index if not exists holdfast_events_list_asc
  on holdfast_events (account_id, created_at asc nulls last, id desc nulls last);

create table if not exists holdfast_deliveries (
  id text primary key,
  account_id text not null,
  event_id text not null references holdfast_events (id) on delete cascade,
  endpoint_id text not null references holdfast_webhook_endpoints (id) on delete cascade,
  event_type text not null,
  status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed', 'dead')),
  attempt_count integer not null default 0,
  retry_base integer not null default 0,
  next_attempt_at timestamptz(3),
  lease_owner text,
  lease_expires_at timestamptz(3),
  last_attempt_at timestamptz(3),
  last_status integer,
  last_error text,
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null,
  unique (event_id, endpoint_id)
);
alter table holdfast_deliveries add column if not exists retry_base integer not null default 0;
create index if not exists holdfast_deliveries_due
  on holdfast_deliveries (next_attempt_at) where status in ('pending', 'failed');
create index if not exists holdfast_deliveries_endpoint_due
  on holdfast_deliveries (endpoint_id, next_attempt_at) where status in ('pending', 'failed');
create index if not exists holdfast_deliveries_endpoint_live
  on holdfast_deliveries (endpoint_id) where lease_expires_at is not null;
create index if not exists holdfast_deliveries_list
  on holdfast_deliveries (account_id, created_at desc nulls last, id desc nulls last);
create index if not exists holdfast_deliveries_list_asc
  on holdfast_deliveries (account_id, created_at asc nulls last, id desc nulls last);
-- The deliveries of one endpoint, newest first: what an endpoint's page and its dashboard list.
create index if not exists holdfast_deliveries_endpoint_list
  on holdfast_deliveries (account_id, endpoint_id, created_at desc nulls last, id desc nulls last);

create table if not exists holdfast_delivery_attempts (
  id text primary key,
  delivery_id text not null references holdfast_deliveries (id) on delete cascade,
  account_id text not null,
  endpoint_id text not null,
  status integer,
  error text,
  latency_ms integer not null,
  response_body_prefix text,
  created_at timestamptz(3) not null
);
create index if not exists holdfast_delivery_attempts_list
  on holdfast_delivery_attempts (delivery_id, created_at desc nulls last, id desc nulls last);

create table if not exists holdfast_notifications (
  id text primary key,
  account_id text not null,
  type text not null,
  endpoint_id text,
  message text not null,
  disable_at timestamptz(3),
  created_at timestamptz(3) not null
);
create index if not exists holdfast_notifications_list
  on holdfast_notifications (account_id, created_at desc nulls last, id desc nulls last);
`,
};
