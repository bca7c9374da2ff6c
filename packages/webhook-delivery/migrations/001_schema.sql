-- The sender's tables and indexes. Endpoints, their pacing row (the adaptive in-flight limit,
-- the `Retry-After` pause and the `max_per_second` bucket, locked by lease statements) and their
-- release stripes (places released by outcome statements, one counter per worker stripe, so
-- outcomes never wait on the pacing row); the resources' sequences; events (`payload`: the exact
-- bytes sent); deliveries; the attempt log; notifications. Lists index `(account_id, created_at
-- desc, id desc)`, the default order of `@holdfast/cursor-pagination`.
create table holdfast_webhook_endpoints (
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
  max_per_second integer check (max_per_second is null or max_per_second >= 1),
  signature_scheme text not null default 'v1' check (signature_scheme in ('v1', 'v1a')),
  public_key text,
  deleted_at timestamptz(3),
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null,
  check ((signature_scheme = 'v1a') = (public_key is not null))
);
create index holdfast_webhook_endpoints_list
  on holdfast_webhook_endpoints (account_id, created_at desc nulls last, id desc nulls last);

create table holdfast_endpoint_pacing (
  endpoint_id text primary key references holdfast_webhook_endpoints (id) on delete cascade,
  in_flight bigint not null default 0,
  concurrency_limit real,
  concurrency_max integer,
  paused_until timestamptz(3),
  tokens real,
  tokens_at timestamptz(3)
) with (fillfactor = 50);

create table holdfast_endpoint_releases (
  endpoint_id text not null references holdfast_webhook_endpoints (id) on delete cascade,
  stripe smallint not null,
  released bigint not null default 0,
  primary key (endpoint_id, stripe)
) with (fillfactor = 50);

create table holdfast_resource_sequences (
  resource_id text primary key,
  sequence bigint not null
);

create table holdfast_events (
  id text primary key,
  account_id text not null,
  type text not null,
  resource_id text not null,
  sequence bigint not null,
  payload text not null,
  created_at timestamptz(3) not null
);
create index holdfast_events_list
  on holdfast_events (account_id, created_at desc nulls last, id desc nulls last);
-- Oldest first, for consumers catching up on missed events (sort=createdAt).
create index holdfast_events_list_asc
  on holdfast_events (account_id, created_at asc nulls last, id desc nulls last);

create table holdfast_deliveries (
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
create index holdfast_deliveries_due
  on holdfast_deliveries (next_attempt_at) where status in ('pending', 'failed');
-- The exact lease order, so deliveries due at one instant (a burst) need no sort.
create index holdfast_deliveries_endpoint_next
  on holdfast_deliveries (endpoint_id, next_attempt_at, id) where status in ('pending', 'failed');
create index holdfast_deliveries_endpoint_live
  on holdfast_deliveries (endpoint_id) where lease_expires_at is not null;
create index holdfast_deliveries_list
  on holdfast_deliveries (account_id, created_at desc nulls last, id desc nulls last);
create index holdfast_deliveries_list_asc
  on holdfast_deliveries (account_id, created_at asc nulls last, id desc nulls last);
-- The deliveries of one endpoint, newest first: what an endpoint's page and its dashboard list.
create index holdfast_deliveries_endpoint_list
  on holdfast_deliveries (account_id, endpoint_id, created_at desc nulls last, id desc nulls last);

create table holdfast_delivery_attempts (
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
create index holdfast_delivery_attempts_list
  on holdfast_delivery_attempts (delivery_id, created_at desc nulls last, id desc nulls last);
create index holdfast_delivery_attempts_endpoint_time
  on holdfast_delivery_attempts (endpoint_id, created_at);

create table holdfast_notifications (
  id text primary key,
  account_id text not null,
  type text not null,
  endpoint_id text,
  message text not null,
  disable_at timestamptz(3),
  created_at timestamptz(3) not null
);
create index holdfast_notifications_list
  on holdfast_notifications (account_id, created_at desc nulls last, id desc nulls last);
