-- Accepted webhook-ids, kept until expires_at (the receiver's retention, 7 days by default, far
-- beyond the 300 s timestamp tolerance), and the newest version seen per resource.
create table if not exists holdfast_webhook_dedup (
  key text primary key,
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);
create index if not exists holdfast_webhook_dedup_expires_at on holdfast_webhook_dedup (expires_at);
create table if not exists holdfast_webhook_versions (
  resource text primary key,
  version bigint not null,
  updated_at timestamptz not null default now()
);
