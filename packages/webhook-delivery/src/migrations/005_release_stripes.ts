/**
 * In-flight releases off the hot pacing row. `holdfast_endpoint_pacing.in_flight` becomes the
 * count of in-flight places ever charged (by lease statements, under the row's lock) and
 * `holdfast_endpoint_releases` holds, per endpoint and stripe, the places ever released (by
 * outcome statements, each worker writing its own stripe): an endpoint's in-flight count is
 * `in_flight - sum(released)`. Outcome statements then never wait for a lease statement of
 * another worker process holding the pacing row, and a lease statement that reads the stripes
 * in an older snapshot than the pacing row it locked sees fewer releases, never more: the
 * in-flight bound holds. Both counters only grow (bigint), so no reader sees one side folded
 * and not the other.
 */
export const releaseStripes: { readonly id: string; readonly sql: string } = {
  id: 'webhook-delivery/005_release_stripes',
  sql: `
alter table holdfast_endpoint_pacing alter column in_flight type bigint;

create table if not exists holdfast_endpoint_releases (
  endpoint_id text not null references holdfast_webhook_endpoints (id) on delete cascade,
  stripe smallint not null,
  released bigint not null default 0,
  primary key (endpoint_id, stripe)
) with (fillfactor = 50);
`,
};
