-- Per-endpoint quotas of the actions that make the sender send to a tenant's URL (test events,
-- recoveries): one fixed-window counter per endpoint and action. Kept in the database so the
-- limit is exact across every API process: the upsert takes the row's lock, so concurrent
-- requests for one endpoint count one after another, and a refused or failed request's
-- transaction rolls its count back.
create table if not exists holdfast_endpoint_quotas (
  endpoint_id text not null,
  action text not null,
  window_start timestamptz(3) not null,
  used integer not null,
  primary key (endpoint_id, action)
);
