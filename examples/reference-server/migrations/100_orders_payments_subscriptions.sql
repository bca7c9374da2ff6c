-- Orders, refunds, payment methods, payments and subscriptions (CONTRACT section 5).
-- Money is bigint minor units with an ISO 4217 code (checked against src/currencies.ts by the
-- API; here only its shape); timestamps are timestamptz(3) so a cursor's value is exactly the
-- stored one. Every table carries account_id: another account's row is answered 404.
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
create index if not exists holdfast_orders_account_created on holdfast_orders (account_id, created_at desc, id desc);
create index if not exists holdfast_orders_account_total on holdfast_orders (account_id, total, id desc);

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
create index if not exists holdfast_refunds_order_created on holdfast_refunds (order_id, created_at desc, id desc);

create table if not exists holdfast_payment_methods (
  id text primary key,
  account_id text not null,
  type text not null check (type = 'card'),
  card jsonb not null,
  created_at timestamptz(3) not null,
  updated_at timestamptz(3) not null,
  deleted_at timestamptz(3)
);
create index if not exists holdfast_payment_methods_account_created on holdfast_payment_methods (account_id, created_at desc, id desc);

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
create index if not exists holdfast_payments_account_created on holdfast_payments (account_id, created_at desc, id desc);
create index if not exists holdfast_payments_settle on holdfast_payments (settle_at) where status = 'processing';

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
create index if not exists holdfast_subscriptions_account_created on holdfast_subscriptions (account_id, created_at desc, id desc);
