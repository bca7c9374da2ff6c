-- One tenant's events by received_at, newest or oldest first, and by status: what a listing of
-- the inbox per tenant reads (a cursor-paginated page: the key, then `id desc`, both NULLS LAST,
-- as @holdfast/cursor-pagination orders them), so a page is an index range scan at any depth.
create index if not exists holdfast_webhook_inbox_tenant_received on holdfast_webhook_inbox (tenant, received_at desc nulls last, id desc nulls last);
create index if not exists holdfast_webhook_inbox_tenant_received_asc on holdfast_webhook_inbox (tenant, received_at asc nulls last, id desc nulls last);
create index if not exists holdfast_webhook_inbox_tenant_status_received on holdfast_webhook_inbox (tenant, status, received_at desc nulls last, id desc nulls last);
