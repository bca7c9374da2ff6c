/**
 * Ordered delivery per resource (opt-in per endpoint). An endpoint's `ordering` says whether its
 * deliveries of one resource go one at a time; a delivery records its line when it is created:
 * `ordering_key` (the event's resource id; null for an unordered endpoint) and `ordering_pos`, its
 * place in that line (from one sequence, taken under the resource's sequence row lock, so places
 * follow the events' order and a replayed delivery joins the back of its line).
 *
 * `holdfast_deliveries_ordered` finds a line's head (its lowest unfinished place) with one index
 * probe; `holdfast_deliveries_ordered_in_flight` holds at most one leased delivery per line, so
 * no two workers ever send two of one line at once (as pg-boss's FIFO queues do with a partial
 * unique index). Both are partial: unordered deliveries have no entry in either.
 */
export const ordering: { readonly id: string; readonly sql: string } = {
  id: 'webhook-delivery/003_ordering',
  sql: `
alter table holdfast_webhook_endpoints
  add column ordering text not null default 'none' check (ordering in ('none', 'per-resource'));
alter table holdfast_deliveries add column ordering_key text, add column ordering_pos bigint;
create sequence holdfast_delivery_order as bigint;
create index holdfast_deliveries_ordered
  on holdfast_deliveries (endpoint_id, ordering_key, ordering_pos)
  where ordering_key is not null and status in ('pending', 'failed');
create unique index holdfast_deliveries_ordered_in_flight
  on holdfast_deliveries (endpoint_id, ordering_key)
  where ordering_key is not null and lease_expires_at is not null;
`,
};
