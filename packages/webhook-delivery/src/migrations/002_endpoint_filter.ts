/**
 * Endpoints' payload filters (`filter`, a JSON object or null): the fan-out evaluates them with
 * `holdfast_filter_match` (`../sql/match-filter.ts`) as it writes an event's deliveries.
 */
export const endpointFilter: { readonly id: string; readonly sql: string } = {
  id: 'webhook-delivery/002_endpoint_filter',
  sql: `
alter table holdfast_webhook_endpoints
  add column filter jsonb check (filter is null or jsonb_typeof(filter) = 'object');
`,
};
