/**
 * Delivery pacing: an optional `max_per_second` per endpoint, and one small row per endpoint
 * that every worker shares through the database, so the in-flight bound, the adaptive limit
 * (AIMD), the `Retry-After` pause and the rate's token bucket hold across workers and processes.
 * `in_flight` counted the deliveries whose lease is set; since 005 it counts the places charged
 * and `holdfast_endpoint_releases` the places released. `last_grant` is unused (a removed
 * two-statement lease wrote it). The rows are updated in place all the time, hence the low fill
 * factor (room for HOT updates). Idempotent like 001.
 */
export const pacing: { readonly id: string; readonly sql: string } = {
  id: 'webhook-delivery/002_pacing',
  sql: `
alter table holdfast_webhook_endpoints add column if not exists max_per_second integer
  check (max_per_second is null or max_per_second >= 1);

create table if not exists holdfast_endpoint_pacing (
  endpoint_id text primary key references holdfast_webhook_endpoints (id) on delete cascade,
  in_flight integer not null default 0,
  last_grant integer not null default 0,
  concurrency_limit real,
  concurrency_max integer,
  paused_until timestamptz(3),
  tokens real,
  tokens_at timestamptz(3)
) with (fillfactor = 50);

insert into holdfast_endpoint_pacing (endpoint_id, in_flight)
select e.id, (select count(*) from holdfast_deliveries d
              where d.endpoint_id = e.id and d.lease_expires_at is not null)
from holdfast_webhook_endpoints e
on conflict (endpoint_id) do nothing;
`,
};
