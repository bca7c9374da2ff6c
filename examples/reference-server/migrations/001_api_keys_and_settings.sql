-- API keys (CONTRACT section 3): only the SHA-256 of each key is stored.
create table if not exists holdfast_api_keys (
  id text primary key,
  key_hash text not null unique,
  key_prefix text not null,
  account text not null,
  scopes text[] not null,
  created_at timestamptz(3) not null default now()
);
create index if not exists holdfast_api_keys_account on holdfast_api_keys (account);

-- Server-wide settings generated once and kept, such as the cursor-signing secret.
create table if not exists holdfast_settings (
  name text primary key,
  value text not null,
  created_at timestamptz(3) not null default now()
);
