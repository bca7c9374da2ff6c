/**
 * One endpoint's attempts by time, for `endpointStats()` (attempts per hour or day by outcome,
 * with latency percentiles): without it the health chart scans every attempt of the account.
 */
export const attemptStatsIndex: { readonly id: string; readonly sql: string } = {
  id: 'webhook-delivery/004_attempt_stats_index',
  sql: `
create index if not exists holdfast_delivery_attempts_endpoint_time
  on holdfast_delivery_attempts (endpoint_id, created_at);
`,
};
