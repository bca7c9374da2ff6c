-- Idempotency keys and their stored answers. A normal logged table: an unlogged one would
-- lose every stored answer in a crash, exactly when clients retry. token names the attempt
-- holding an unanswered key and locked_until ends its lease; expires_at drives the purge.
-- "if not exists", so a database that made the same table before adopts it.
create table if not exists holdfast_idempotency_keys (
  account text not null,
  key text not null check (char_length(key) between 1 and 255),
  fingerprint text not null,
  token text,
  locked_until timestamptz not null,
  response_status smallint,
  response_headers jsonb,
  response_body bytea,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  primary key (account, key)
);
create index if not exists holdfast_idempotency_keys_expires_at_idx
  on holdfast_idempotency_keys (expires_at);
