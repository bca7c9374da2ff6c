import type { Db, Transaction } from '@holdfast/db';
import { fromPg, pgTransaction } from '@holdfast/db/pg';
import pg from 'pg';
import { servePgliteDataDir } from './index';

// The connector on node-postgres (the reference server's driver, and any example's that serves
// the packages through @holdfast/db/pg), on a real PostgreSQL or the same embedded PGlite.

/**
 * One node-postgres pool, whichever engine is behind it: the driver the reference server
 * runs on because a backend terminated under it (`pg_terminate_backend`, a restart, a proxy
 * cutting the connection) rejects that connection's queries and the pool replaces it, and the
 * process goes on.
 */
export interface PgDatabase {
  readonly pool: pg.Pool;
  /** Statements on any connection of the pool. */
  readonly db: Db;
  /** A transaction on one connection of the pool: `(client, db) => ...`. */
  readonly transaction: Transaction<pg.PoolClient>;
  /** `pglite` when the embedded engine serves, `postgres` for a real server. */
  readonly kind: 'pglite' | 'postgres';
  /** Where the pool connects (no credentials): for start-up messages. */
  readonly description: string;
  close(): Promise<void>;
}

/** Options of {@link openPgDatabase}. */
export interface PgDatabaseOptions {
  /** A PostgreSQL URL. Absent: embedded PGlite. */
  readonly databaseUrl?: string | undefined;
  /** PGlite's directory; `memory://` (the default) keeps nothing. */
  readonly dataDir?: string | undefined;
  /** Pool size for a real server (PGlite always gets one connection). @defaultValue 10 */
  readonly max?: number;
  /** `application_name` of the connections (shown in `pg_stat_activity`); the URL's wins. */
  readonly applicationName?: string;
  /**
   * `statement_timeout` and `lock_timeout` of every connection, in milliseconds. PGlite ignores
   * start-up parameters and enforces no statement timeout: they only act on a real server.
   */
  readonly timeouts?: { readonly statementMs: number; readonly lockMs: number };
  /**
   * How long a request for a connection may wait (all taken, or the server not answering) before
   * it fails as unavailable (a 503), instead of waiting without end. @defaultValue 10000
   */
  readonly connectTimeoutMs?: number;
  /**
   * When another live process holds the PGlite data directory: `refuse` (the default) throws
   * `DataDirectoryInUse`; `join` connects to that process's database through its loopback
   * socket (one connection, for a CLI such as `keys:create`), so nothing opens the directory twice.
   */
  readonly whenHeld?: 'refuse' | 'join';
  /** Told of a connection that failed while idle in the pool (the pool has already dropped it). */
  readonly onIdleError?: (error: Error) => void;
}

const CONNECT_TIMEOUT_MS = 10_000;

function wrap(
  pool: pg.Pool,
  kind: PgDatabase['kind'],
  description: string,
  close: () => Promise<void>,
  onIdleError: ((error: Error) => void) | undefined,
): PgDatabase {
  // An idle connection that dies (a terminated backend, a server stopping) is an 'error' event
  // of the pool: unheard, Node would end the process for it.
  pool.on('error', (error) => onIdleError?.(error));
  // A connection that dies while checked out (inside a transaction) is an 'error' event of its
  // client, which the pool only listens to while the client is idle: unheard, it ends the
  // process too. The query it was running is rejected either way, so the event needs no action.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  // pglite-socket serves every connection from PGlite's one session, which outlives them: a
  // statement named by one connection would still exist when the next one prepares it again.
  const options = { prepare: kind === 'postgres' };
  return {
    pool,
    db: fromPg(pool, options),
    transaction: pgTransaction(pool, options),
    kind,
    description,
    close,
  };
}

/** A pool of one connection to a PGlite socket, this process's or a running server's. */
function pglitePool(host: string, port: number, options: PgDatabaseOptions): pg.Pool {
  return new pg.Pool({
    host,
    port,
    user: 'postgres',
    database: 'postgres',
    ssl: false,
    // PGlite has one session and answers one connection at a time.
    max: 1,
    connectionTimeoutMillis: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    ...(options.applicationName ? { application_name: options.applicationName } : {}),
  });
}

/**
 * Opens the database the same way everywhere: a node-postgres pool against `databaseUrl`, or
 * against an embedded PGlite served by pglite-socket on an ephemeral loopback port (so several
 * instances with different data directories never collide), with a one-connection pool.
 *
 * @example
 * ```ts
 * const database = await openPgDatabase({ databaseUrl: process.env.DATABASE_URL, max: 10 });
 * const rows = await database.db.query<{ one: number }>('select 1 as one');
 * await database.close();
 * ```
 */
export async function openPgDatabase(options: PgDatabaseOptions = {}): Promise<PgDatabase> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.max ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
      ...(options.applicationName ? { application_name: options.applicationName } : {}),
      ...(options.timeouts
        ? { statement_timeout: options.timeouts.statementMs, lock_timeout: options.timeouts.lockMs }
        : {}),
    });
    const url = new URL(options.databaseUrl);
    return wrap(
      pool,
      'postgres',
      `PostgreSQL at ${url.hostname}:${url.port || 5432}${url.pathname}`,
      // Ended already (a test taking the database away) is closed.
      () => (pool.ended ? Promise.resolve() : pool.end()),
      options.onIdleError,
    );
  }
  const engine = await servePgliteDataDir(options.dataDir, options.whenHeld);
  const pool = pglitePool(engine.host, engine.port, options);
  return wrap(
    pool,
    'pglite',
    engine.description,
    async () => {
      if (!pool.ended) await pool.end();
      await engine.stop();
    },
    options.onIdleError,
  );
}
