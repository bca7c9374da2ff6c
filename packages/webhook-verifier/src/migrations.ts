import type { Migration } from '@holdfast/db/migrate';

/*
 * The receiver toolkit's PostgreSQL tables as versioned migrations, applied once each and in
 * order by the app's migration runner (which records each `id`), never "create if not exists"
 * at every start.
 *
 * - `holdfast_webhook_dedup` keeps accepted `webhook-id`s until `expires_at` (retention chosen
 *   by the receiver, 7 days by default, far beyond the 300 s tolerance).
 * - `holdfast_webhook_versions` keeps the newest version seen per resource.
 * - `holdfast_webhook_inbox` is the durable inbox: every verified event, its exact bytes and a
 *   JSON view, processed in the background with retries and failure records.
 */

// 001 is the DDL the package used to apply at every start ("if not exists" kept, so databases
// that already hold these tables take it as a no-op).
const dedupAndVersions = `
create table if not exists holdfast_webhook_dedup (
  key text primary key,
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);
create index if not exists holdfast_webhook_dedup_expires_at on holdfast_webhook_dedup (expires_at);
create table if not exists holdfast_webhook_versions (
  resource text primary key,
  version bigint not null,
  updated_at timestamptz not null default now()
);
`;

// One row per verified event of a scope (a receiver): the unique key is the second line of
// deduplication behind holdfast_webhook_dedup, so even an id whose record expired is stored once.
const inbox = `
create table holdfast_webhook_inbox (
  id text primary key,
  scope text not null,
  tenant text,
  webhook_id text not null,
  type text,
  payload jsonb not null,
  body bytea not null,
  status text not null default 'pending'
    check (status in ('pending', 'processed', 'stale', 'ignored', 'failed')),
  resource text,
  attempts integer not null default 0,
  next_attempt_at timestamptz(3),
  last_error text,
  received_at timestamptz(3) not null default date_trunc('milliseconds', now()),
  processed_at timestamptz(3),
  unique (scope, webhook_id)
);
create index holdfast_webhook_inbox_pending on holdfast_webhook_inbox (received_at, id) where status = 'pending';
`;

const inboxTenantReceived = `
-- A tenant's inbox listed by arrival, either way, and by status then arrival: the keyset order
-- @holdfast/cursor-pagination sends (the key, then id desc, both NULLS LAST), so a page of a
-- large inbox is an index range scan at any depth.
create index if not exists holdfast_webhook_inbox_tenant_received
  on holdfast_webhook_inbox (tenant, received_at desc nulls last, id desc nulls last);
create index if not exists holdfast_webhook_inbox_tenant_received_asc
  on holdfast_webhook_inbox (tenant, received_at asc nulls last, id desc nulls last);
create index if not exists holdfast_webhook_inbox_tenant_status_received
  on holdfast_webhook_inbox (tenant, status, received_at desc nulls last, id desc nulls last);
`;

/**
 * The migrations of `@holdfast/webhook-verifier/postgres`, oldest first. Apply them with your
 * migration runner before using the PostgreSQL stores or the inbox.
 *
 * @example
 * ```ts
 * import { migrations } from '@holdfast/webhook-verifier/postgres';
 * for (const { id, sql: text } of migrations) if (!(await applied(id))) await sql.unsafe(text);
 * ```
 */
export const migrations: readonly Migration[] = [
  { id: 'webhook-verifier/001_dedup_and_versions', sql: dedupAndVersions },
  { id: 'webhook-verifier/002_inbox', sql: inbox },
  { id: 'webhook-verifier/003_inbox_tenant_received', sql: inboxTenantReceived },
];
