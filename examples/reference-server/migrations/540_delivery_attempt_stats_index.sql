-- GET /v1/webhook-endpoints/{id}/stats reads one endpoint's attempts by time: the index of
-- @holdfast/webhook-delivery's statsSchema, applied after the package's tables exist.
create index if not exists holdfast_delivery_attempts_endpoint_time
  on holdfast_delivery_attempts (endpoint_id, created_at);
