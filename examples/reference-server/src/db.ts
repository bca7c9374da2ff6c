import { randomBytes } from 'node:crypto';
import { migrations as apiKeyMigrations } from '@holdfast/api-keys';
import type { Keyring } from '@holdfast/cursor-pagination';
import type { Db } from '@holdfast/db';
import { type Migration, readMigrations } from '@holdfast/db/migrate';
import { migrations as idempotencyMigrations } from '@holdfast/idempotency';
import { openPgDatabase, type PgDatabase } from '@holdfast/pg/node-postgres';
import { migrations as deliveryMigrations } from '@holdfast/webhook-delivery';
import { migrations as portalMigrations } from '@holdfast/webhook-portal';
import { migrations as verifierMigrations } from '@holdfast/webhook-verifier/postgres';
import type { Config } from './config';

const MIGRATIONS_DIR = new URL('../migrations/', import.meta.url);

/**
 * Opens PostgreSQL (`DATABASE_URL`) or embedded PGlite under `dataDir` for a command-line tool,
 * on node-postgres. A PGlite directory another process holds is refused, or with
 * `whenHeld: 'join'` reached through that process's socket: never opened twice.
 */
export function openDatabase(config: Config, whenHeld: 'refuse' | 'join' = 'refuse'): Promise<PgDatabase> {
  return openPgDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    max: 2,
    whenHeld,
    applicationName: 'holdfast cli',
  });
}

/** The pools of a server process: the API's and the workers', apart. */
export interface Pools<D> {
  /**
   * The API's pool (`HOLDFAST_API_POOL_SIZE`): every statement under `statement_timeout` and
   * `lock_timeout`, so a locked table answers 503 instead of holding requests. Absent in a
   * worker-only process.
   */
  readonly api: D | undefined;
  /**
   * The workers' pool (`HOLDFAST_WORKER_POOL_SIZE`), without timeouts: a worker may wait on a lock
   * for as long as it takes without holding a connection the API needs, and the reverse. Also runs
   * the start-up work (migrations, seeding), which must not be cut at the API's timeout; in an
   * API-only process it has one connection.
   */
  readonly worker: D;
  close(): Promise<void>;
}

/** What {@link openPools} asks of a driver: one pool, as these options say. */
type OpenPool<D> = (options: {
  databaseUrl: string | undefined;
  dataDir: string;
  max: number;
  applicationName: string;
  timeouts?: { statementMs: number; lockMs: number };
}) => Promise<D>;

/**
 * Opens the pools `config.role` needs. On PostgreSQL, two pools; on PGlite, one connection that
 * both use: PGlite is one session that runs one transaction at a time, so there is no second
 * session to separate, no lock one session can hold against another, and no timeout (PGlite
 * ignores start-up parameters and enforces no `statement_timeout`).
 */
async function openPools<D extends { readonly kind: 'pglite' | 'postgres'; close(): Promise<void> }>(
  config: Config,
  open: OpenPool<D>,
): Promise<Pools<D>> {
  const { database } = config;
  const worker = await open({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    max: config.role === 'api' ? 1 : database.workerPoolSize,
    applicationName: 'holdfast worker',
  });
  if (config.role === 'worker') return { api: undefined, worker, close: () => worker.close() };
  if (worker.kind === 'pglite') return { api: worker, worker, close: () => worker.close() };
  const api = await open({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    max: database.apiPoolSize,
    applicationName: 'holdfast api',
    timeouts: { statementMs: database.statementTimeoutMs, lockMs: database.lockTimeoutMs },
  }).catch(async (error: unknown) => {
    await worker.close();
    throw error;
  });
  return {
    api,
    worker,
    async close() {
      await Promise.all([api.close(), worker.close()]);
    },
  };
}

/**
 * The server's pools, on node-postgres (a terminated backend rejects that connection's queries
 * and the pool replaces it; the process goes on). `onIdleError` hears a connection that failed
 * while idle.
 */
export function openPgPools(
  config: Config,
  onIdleError?: (error: Error) => void,
): Promise<Pools<PgDatabase>> {
  return openPools(config, (options) =>
    openPgDatabase({ ...options, ...(onIdleError ? { onIdleError } : {}) }),
  );
}

/**
 * The server's own tables: `migrations/NNN_<what>.sql`, in name order. They create and change
 * only the server's tables; the packages' tables are the packages' own migrations.
 */
export function serverMigrations(): Promise<Migration[]> {
  return readMigrations(MIGRATIONS_DIR);
}

/**
 * Every migration the server applies, in order: the packages' own versioned lists first (the
 * server's files build on their tables), then the server's files. The server and the
 * `keys:create` CLI both apply this list, so either may be the first to touch a database.
 */
export async function allMigrations(): Promise<Migration[]> {
  return [
    ...apiKeyMigrations(),
    ...idempotencyMigrations(),
    ...deliveryMigrations(),
    ...verifierMigrations(),
    ...portalMigrations(),
    ...(await serverMigrations()),
  ];
}

/**
 * The cursor keyring: `HOLDFAST_CURSOR_SECRET` when set, else a secret generated on first start
 * and kept in `holdfast_settings`, so cursors stay valid across restarts and instances.
 */
export async function cursorKeyring(db: Db, configured: string | undefined): Promise<Keyring> {
  if (configured) return { current: 'env', keys: { env: configured } };
  await db.query(
    `insert into holdfast_settings (name, value) values ('cursor_secret', $1::text)
     on conflict (name) do nothing`,
    [randomBytes(32).toString('base64url')],
  );
  const [row] = await db.query<{ value: string }>(
    "select value from holdfast_settings where name = 'cursor_secret'",
  );
  if (!row) throw new Error('cursor secret missing after insert');
  return { current: 'db1', keys: { db1: row.value } };
}
