-- Lists of deliveries sorted by status: an index for each order a list offers, so a page is an
-- index range scan at any depth instead of a sort of every delivery of the account. The status
-- sorts by its lifecycle rank (pending < succeeded < failed < dead), as the expression
-- `array_position(array[...ranks], status::text)` that `@holdfast/sort-allowlist` builds for an
-- enum field with that rank; each index ends with the id descending, the tiebreaker every list
-- order ends with. Alone and before `created_at`, in both directions.
create index holdfast_deliveries_status_asc
  on holdfast_deliveries (account_id, (array_position(array['pending', 'succeeded', 'failed', 'dead']::text[], status::text)) asc nulls last, id desc nulls last);
create index holdfast_deliveries_status_desc
  on holdfast_deliveries (account_id, (array_position(array['pending', 'succeeded', 'failed', 'dead']::text[], status::text)) desc nulls last, id desc nulls last);
create index holdfast_deliveries_status_asc_created_asc
  on holdfast_deliveries (account_id, (array_position(array['pending', 'succeeded', 'failed', 'dead']::text[], status::text)) asc nulls last, created_at asc nulls last, id desc nulls last);
create index holdfast_deliveries_status_asc_created_desc
  on holdfast_deliveries (account_id, (array_position(array['pending', 'succeeded', 'failed', 'dead']::text[], status::text)) asc nulls last, created_at desc nulls last, id desc nulls last);
create index holdfast_deliveries_status_desc_created_asc
  on holdfast_deliveries (account_id, (array_position(array['pending', 'succeeded', 'failed', 'dead']::text[], status::text)) desc nulls last, created_at asc nulls last, id desc nulls last);
create index holdfast_deliveries_status_desc_created_desc
  on holdfast_deliveries (account_id, (array_position(array['pending', 'succeeded', 'failed', 'dead']::text[], status::text)) desc nulls last, created_at desc nulls last, id desc nulls last);
