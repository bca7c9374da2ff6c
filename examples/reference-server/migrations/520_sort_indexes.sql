-- One index per served single-key sort, in each direction, matching the ORDER BY that
-- @holdfast/cursor-pagination sends exactly: the key, then `id desc`, both NULLS LAST. The first
-- indexes (migration 100) said `created_at desc, id desc`, which is NULLS FIRST: PostgreSQL does
-- not use NOT NULL to reconcile the two, so every list page sorted all of the account's rows.
-- With these, a page is an index range scan at any depth (test/indexes.test.ts checks every
-- one). Served by a top-N sort of the matching rows instead: sorts by an enum rank (`status`;
-- filter by status, indexed below, for large lists), sorts by several keys, and refunds by
-- amount (one order's refunds are few).

drop index if exists holdfast_orders_account_created;
drop index if exists holdfast_orders_account_total;
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

drop index if exists holdfast_refunds_order_created;
create index if not exists holdfast_refunds_created_desc
  on holdfast_refunds (order_id, created_at desc nulls last, id desc nulls last);
create index if not exists holdfast_refunds_created_asc
  on holdfast_refunds (order_id, created_at asc nulls last, id desc nulls last);

drop index if exists holdfast_payment_methods_account_created;
create index if not exists holdfast_payment_methods_created_desc
  on holdfast_payment_methods (account_id, created_at desc nulls last, id desc nulls last) where deleted_at is null;
create index if not exists holdfast_payment_methods_created_asc
  on holdfast_payment_methods (account_id, created_at asc nulls last, id desc nulls last) where deleted_at is null;

drop index if exists holdfast_payments_account_created;
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

drop index if exists holdfast_subscriptions_account_created;
create index if not exists holdfast_subscriptions_created_desc
  on holdfast_subscriptions (account_id, created_at desc nulls last, id desc nulls last);
create index if not exists holdfast_subscriptions_created_asc
  on holdfast_subscriptions (account_id, created_at asc nulls last, id desc nulls last);

create index if not exists holdfast_inbound_events_account_received_asc
  on holdfast_inbound_events (account_id, received_at asc nulls last, id desc nulls last);
create index if not exists holdfast_inbound_events_status_received
  on holdfast_inbound_events (account_id, status, received_at desc nulls last, id desc nulls last);
