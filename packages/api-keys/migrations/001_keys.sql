-- The API keys: only the SHA-256 of each key is kept, with its first 12 characters
-- (key_prefix) to tell keys apart in a list. "if not exists", so a database that made the
-- same table before adopts it.
create table if not exists holdfast_api_keys (
  id text primary key,
  key_hash text not null unique,
  key_prefix text not null,
  account text not null,
  scopes text[] not null,
  created_at timestamptz(3) not null default now()
);
create index if not exists holdfast_api_keys_account on holdfast_api_keys (account);
