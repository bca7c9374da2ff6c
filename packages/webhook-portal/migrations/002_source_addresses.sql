-- The addresses webhooks are sent from, as last published (GET /webhook-source-addresses): one row.
-- updated_at is when this list was first published; publishing the same list keeps it, another
-- list moves it and notifies every account.
create table if not exists holdfast_webhook_source_addresses (
  id boolean primary key default true check (id),
  addresses text[] not null,
  updated_at timestamptz(3) not null
);
