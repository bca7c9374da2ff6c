-- The receiver's inbox (SPEC section 6, "Verification (receiver)"): every verified webhook that
-- arrives at /hooks/{name} is stored here and acknowledged at once; the inbox processor works
-- through it in the background. The unique key (receiver, webhook id) is the PostgreSQL
-- deduplication: an already-recorded id means already received.
create table if not exists holdfast_inbound_events (
  id text primary key,
  receiver text not null,
  account_id text not null,
  webhook_id text not null,
  event_type text,
  payload jsonb not null,
  status text not null default 'pending'
    check (status in ('pending', 'processed', 'stale', 'ignored')),
  resource_id text,
  sequence bigint,
  attempts integer not null default 0,
  received_at timestamptz(3) not null default date_trunc('milliseconds', now()),
  processed_at timestamptz(3),
  unique (receiver, webhook_id)
);

create index if not exists holdfast_inbound_events_account_received
  on holdfast_inbound_events (account_id, received_at desc nulls last, id desc nulls last);

create index if not exists holdfast_inbound_events_pending
  on holdfast_inbound_events (received_at) where status = 'pending';

-- The newest version of each remote resource the receiver has applied, per account: an event
-- whose sequence is not above this one is stale and discarded (SPEC section 6, stale events).
create table if not exists holdfast_inbound_resource_versions (
  account_id text not null,
  resource_id text not null,
  sequence bigint,
  updated_at timestamptz(3),
  event_id text not null,
  primary key (account_id, resource_id)
);
