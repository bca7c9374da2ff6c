-- The reference server's own tables, in their first released form (one baseline: nothing was
-- released before it). Package tables are the packages' own migrations, applied before this
-- file; nothing here reads or changes them. `if not exists` throughout, so a development
-- database made by the unsquashed files adopts this baseline unchanged.

-- Server-wide settings generated once and kept, such as the cursor-signing secret.
create table if not exists holdfast_settings (
  name text primary key,
  value text not null,
  created_at timestamptz(3) not null default now()
);

-- Orders, refunds, payment methods, payments and subscriptions. Money is bigint minor units with
-- an ISO 4217 code (checked by the API; here only its shape); timestamps are timestamptz(3) so a
-- cursor's value is exactly the stored one. Every table carries account_id: another account's row
-- is answered 404.
--
-- Every sort the lists accept is served by an index matching the ORDER BY that
-- @holdfast/cursor-pagination sends exactly: the keys, then `id desc`, all NULLS LAST (an index
-- that says `desc` alone is NULLS FIRST, and PostgreSQL does not use NOT NULL to reconcile the
-- two). A sort by status sorts by its rank, the expression @holdfast/sort-allowlist sorts by
-- (array_position over the ranked values); a status filter with a status sort adds the rank as an
-- equality, so the same indexes serve it (test/indexes.test.ts and test/sort-indexes.test.ts
-- check every one).

create table if not exists holdfast_orders (
  id text primary key,
  account_id text not null,
  status text not null check (status in ('pending', 'shipped', 'cancelled')),
  currency char(3) not null check (currency ~ '^[A-Z]{3}$'),
  total bigint not null check (total >= 0),
  amount_refunded bigint not null default 0 check (amount_refunded >= 0 and amount_refunded <= total),
  description text,
  metadata jsonb not null default '{}',
  version integer not null default 1,
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null
);
create index if not exists holdfast_orders_created_desc
  on holdfast_orders (account_id, created_at desc nulls last, id desc nulls last);
create index if not exists holdfast_orders_created_asc
  on holdfast_orders (account_id, created_at asc nulls last, id desc nulls last);
create index if not exists holdfast_orders_total_desc
  on holdfast_orders (account_id, total desc nulls last, id desc nulls last);
create index if not exists holdfast_orders_total_asc
  on holdfast_orders (account_id, total asc nulls last, id desc nulls last);
create index if not exists holdfast_orders_status_created
  on holdfast_orders (account_id, status, created_at desc nulls last, id desc nulls last);
create index if not exists holdfast_orders_status_asc
  on holdfast_orders (account_id, (array_position(array['pending', 'shipped', 'cancelled']::text[], status::text)) asc nulls last, id desc nulls last);
create index if not exists holdfast_orders_status_desc
  on holdfast_orders (account_id, (array_position(array['pending', 'shipped', 'cancelled']::text[], status::text)) desc nulls last, id desc nulls last);
create index if not exists holdfast_orders_status_asc_created_asc
  on holdfast_orders (account_id, (array_position(array['pending', 'shipped', 'cancelled']::text[], status::text)) asc nulls last, created_at asc nulls last, id desc nulls last);
create index if not exists holdfast_orders_status_asc_created_desc
  on holdfast_orders (account_id, (array_position(array['pending', 'shipped', 'cancelled']::text[], status::text)) asc nulls last, created_at desc nulls last, id desc nulls last);
create index if not exists holdfast_orders_status_asc_total_asc
  on holdfast_orders (account_id, (array_position(array['pending', 'shipped', 'cancelled']::text[], status::text)) asc nulls last, total asc nulls last, id desc nulls last);
create index if not exists holdfast_orders_status_asc_total_desc
  on holdfast_orders (account_id, (array_position(array['pending', 'shipped', 'cancelled']::text[], status::text)) asc nulls last, total desc nulls last, id desc nulls last);
create index if not exists holdfast_orders_status_desc_created_asc
  on holdfast_orders (account_id, (array_position(array['pending', 'shipped', 'cancelled']::text[], status::text)) desc nulls last, created_at asc nulls last, id desc nulls last);
create index if not exists holdfast_orders_status_desc_created_desc
  on holdfast_orders (account_id, (array_position(array['pending', 'shipped', 'cancelled']::text[], status::text)) desc nulls last, created_at desc nulls last, id desc nulls last);
create index if not exists holdfast_orders_status_desc_total_asc
  on holdfast_orders (account_id, (array_position(array['pending', 'shipped', 'cancelled']::text[], status::text)) desc nulls last, total asc nulls last, id desc nulls last);
create index if not exists holdfast_orders_status_desc_total_desc
  on holdfast_orders (account_id, (array_position(array['pending', 'shipped', 'cancelled']::text[], status::text)) desc nulls last, total desc nulls last, id desc nulls last);

create table if not exists holdfast_refunds (
  id text primary key,
  account_id text not null,
  order_id text not null references holdfast_orders (id) on delete cascade,
  amount bigint not null check (amount > 0),
  currency char(3) not null,
  reason text,
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null
);
create index if not exists holdfast_refunds_created_desc
  on holdfast_refunds (order_id, created_at desc nulls last, id desc nulls last);
create index if not exists holdfast_refunds_created_asc
  on holdfast_refunds (order_id, created_at asc nulls last, id desc nulls last);

create table if not exists holdfast_payment_methods (
  id text primary key,
  account_id text not null,
  type text not null check (type = 'card'),
  card jsonb not null,
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null,
  deleted_at timestamptz(3)
);
create index if not exists holdfast_payment_methods_created_desc
  on holdfast_payment_methods (account_id, created_at desc nulls last, id desc nulls last) where deleted_at is null;
create index if not exists holdfast_payment_methods_created_asc
  on holdfast_payment_methods (account_id, created_at asc nulls last, id desc nulls last) where deleted_at is null;

create table if not exists holdfast_payments (
  id text primary key,
  account_id text not null,
  status text not null check (status in ('processing', 'succeeded', 'failed')),
  amount bigint not null check (amount > 0),
  currency char(3) not null check (currency ~ '^[A-Z]{3}$'),
  payment_method_id text not null,
  order_id text,
  description text,
  failure_reason text,
  outcome text not null check (outcome in ('succeeded', 'failed')),
  settle_at timestamptz(3),
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null
);
-- The settlement worker's queue: payments still processing, by when they settle.
create index if not exists holdfast_payments_settle on holdfast_payments (settle_at) where status = 'processing';
create index if not exists holdfast_payments_created_desc
  on holdfast_payments (account_id, created_at desc nulls last, id desc nulls last);
create index if not exists holdfast_payments_created_asc
  on holdfast_payments (account_id, created_at asc nulls last, id desc nulls last);
create index if not exists holdfast_payments_amount_desc
  on holdfast_payments (account_id, amount desc nulls last, id desc nulls last);
create index if not exists holdfast_payments_amount_asc
  on holdfast_payments (account_id, amount asc nulls last, id desc nulls last);
create index if not exists holdfast_payments_status_created
  on holdfast_payments (account_id, status, created_at desc nulls last, id desc nulls last);
create index if not exists holdfast_payments_order_created
  on holdfast_payments (account_id, order_id, created_at desc nulls last, id desc nulls last);
create index if not exists holdfast_payments_status_asc
  on holdfast_payments (account_id, (array_position(array['processing', 'succeeded', 'failed']::text[], status::text)) asc nulls last, id desc nulls last);
create index if not exists holdfast_payments_status_desc
  on holdfast_payments (account_id, (array_position(array['processing', 'succeeded', 'failed']::text[], status::text)) desc nulls last, id desc nulls last);
create index if not exists holdfast_payments_status_asc_created_asc
  on holdfast_payments (account_id, (array_position(array['processing', 'succeeded', 'failed']::text[], status::text)) asc nulls last, created_at asc nulls last, id desc nulls last);
create index if not exists holdfast_payments_status_asc_created_desc
  on holdfast_payments (account_id, (array_position(array['processing', 'succeeded', 'failed']::text[], status::text)) asc nulls last, created_at desc nulls last, id desc nulls last);
create index if not exists holdfast_payments_status_asc_amount_asc
  on holdfast_payments (account_id, (array_position(array['processing', 'succeeded', 'failed']::text[], status::text)) asc nulls last, amount asc nulls last, id desc nulls last);
create index if not exists holdfast_payments_status_asc_amount_desc
  on holdfast_payments (account_id, (array_position(array['processing', 'succeeded', 'failed']::text[], status::text)) asc nulls last, amount desc nulls last, id desc nulls last);
create index if not exists holdfast_payments_status_desc_created_asc
  on holdfast_payments (account_id, (array_position(array['processing', 'succeeded', 'failed']::text[], status::text)) desc nulls last, created_at asc nulls last, id desc nulls last);
create index if not exists holdfast_payments_status_desc_created_desc
  on holdfast_payments (account_id, (array_position(array['processing', 'succeeded', 'failed']::text[], status::text)) desc nulls last, created_at desc nulls last, id desc nulls last);
create index if not exists holdfast_payments_status_desc_amount_asc
  on holdfast_payments (account_id, (array_position(array['processing', 'succeeded', 'failed']::text[], status::text)) desc nulls last, amount asc nulls last, id desc nulls last);
create index if not exists holdfast_payments_status_desc_amount_desc
  on holdfast_payments (account_id, (array_position(array['processing', 'succeeded', 'failed']::text[], status::text)) desc nulls last, amount desc nulls last, id desc nulls last);

create table if not exists holdfast_subscriptions (
  id text primary key,
  account_id text not null,
  status text not null check (status in ('active', 'past_due', 'canceled')),
  payment_method_id text not null,
  plan text not null,
  quantity integer not null check (quantity >= 1),
  metadata jsonb not null default '{}',
  canceled_at timestamptz(3),
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null
);
create index if not exists holdfast_subscriptions_created_desc
  on holdfast_subscriptions (account_id, created_at desc nulls last, id desc nulls last);
create index if not exists holdfast_subscriptions_created_asc
  on holdfast_subscriptions (account_id, created_at asc nulls last, id desc nulls last);
create index if not exists holdfast_subscriptions_status_asc
  on holdfast_subscriptions (account_id, (array_position(array['active', 'past_due', 'canceled']::text[], status::text)) asc nulls last, id desc nulls last);
create index if not exists holdfast_subscriptions_status_desc
  on holdfast_subscriptions (account_id, (array_position(array['active', 'past_due', 'canceled']::text[], status::text)) desc nulls last, id desc nulls last);
create index if not exists holdfast_subscriptions_status_asc_created_asc
  on holdfast_subscriptions (account_id, (array_position(array['active', 'past_due', 'canceled']::text[], status::text)) asc nulls last, created_at asc nulls last, id desc nulls last);
create index if not exists holdfast_subscriptions_status_asc_created_desc
  on holdfast_subscriptions (account_id, (array_position(array['active', 'past_due', 'canceled']::text[], status::text)) asc nulls last, created_at desc nulls last, id desc nulls last);
create index if not exists holdfast_subscriptions_status_desc_created_asc
  on holdfast_subscriptions (account_id, (array_position(array['active', 'past_due', 'canceled']::text[], status::text)) desc nulls last, created_at asc nulls last, id desc nulls last);
create index if not exists holdfast_subscriptions_status_desc_created_desc
  on holdfast_subscriptions (account_id, (array_position(array['active', 'past_due', 'canceled']::text[], status::text)) desc nulls last, created_at desc nulls last, id desc nulls last);
