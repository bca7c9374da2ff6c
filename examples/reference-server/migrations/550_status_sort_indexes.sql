-- Every sort the lists accept is served by an index (issue 35): the allowlists now declare the
-- accepted sorts (`indexed` in src/resources/*/schema.ts) and refuse any other with 400
-- invalid_sort, and these are the indexes of the ones migration 520 left to a top-N sort: the
-- enum ranks alone and the rank followed by each other key, in both directions. A sort by
-- status used to read and sort every row of the account on each page (0.85 to 1.43 s a page
-- for a million orders).
--
-- The rank is the expression @holdfast/sort-allowlist sorts by, array_position over the ranked
-- values (bound as parameters there; the planner folds them into the same constant array, so
-- the expression matches). Each index ends with `id desc nulls last`, the tiebreaker every sort
-- ends with, which is also why no index serves the reverse of another. A status filter with a
-- status sort reads the same indexes: the pagination adds the filter's rank as an equality, so
-- the rank is a constant prefix (test/sort-indexes.test.ts checks every sort with every filter).

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
