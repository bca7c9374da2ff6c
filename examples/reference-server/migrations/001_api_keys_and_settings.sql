-- API keys: their table is @holdfast/api-keys/001_keys (the same table, `if not exists`, so a
-- database that applied this file when it still made the table adopts it unchanged).

-- Server-wide settings generated once and kept, such as the cursor-signing secret.
create table if not exists holdfast_settings (
  name text primary key,
  value text not null,
  created_at timestamptz(3) not null default now()
);
