import { parseArgs } from 'node:util';
import { createKey, dbApiKeyStore } from '@holdfast/api-keys';
import { migrate } from '@holdfast/db/migrate';
import { ALL_SCOPES, loadConfig } from './config';
import { allMigrations, openDatabase } from './db';

// `npm run keys:create -w @holdfast/reference-server -- --account acct_x --scopes "orders:read,orders:write"`
// creates an API key in the configured database (DATABASE_URL or HOLDFAST_DATA_DIR) and prints
// it once: only its hash is stored.

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    account: { type: 'string', default: 'acct_demo' },
    scopes: { type: 'string', default: '*' },
    mode: { type: 'string', default: 'test' },
    live: { type: 'boolean', default: false },
  },
});

if (positionals[0] !== 'keys' || positionals[1] !== 'create') {
  console.error(
    'usage: holdfast keys create [--account acct_...] [--scopes "*" | "orders:read,orders:write"] [--mode test|live]',
  );
  process.exit(2);
}
// `--live` is the older spelling of `--mode live`.
const mode = values.live ? 'live' : values.mode;
if (mode !== 'test' && mode !== 'live') {
  console.error('--mode is test or live: test keys see test data, live keys live data');
  process.exit(2);
}
const scopes = values.scopes
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const unknown = scopes.filter((s) => !ALL_SCOPES.has(s));
if (unknown.length > 0 || scopes.length === 0 || !/^acct_[A-Za-z0-9_-]+$/.test(values.account)) {
  console.error(
    `scopes must be among ${[...ALL_SCOPES].join(', ')} and the account must look like acct_<opaque>`,
  );
  process.exit(2);
}
const config = loadConfig(process.env);
// On embedded PGlite a running server holds the data directory: the key is written through
// that server's own connection (never a second open of the directory), so it works at once.
const db = await openDatabase(config, 'join').catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
try {
  await migrate(db.db, await allMigrations());
  const key = await createKey(dbApiKeyStore(db.db), values.account, scopes, mode);
  console.log(
    `API key for ${values.account}, ${mode} mode (${scopes.join(', ')}), in ${db.description}. It is shown this once:\n${key}`,
  );
} finally {
  await db.close();
}
