import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import postgres from 'postgres';
import { DataDirectoryInUse, lockDataDir } from './data-dir-lock';

export { DataDirectoryInUse, LOCK_FILE, type LockHolder } from './data-dir-lock';

export type Sql = postgres.Sql;

export interface Database {
  /** A postgres.js client: the only SQL code path, whichever engine is behind it. */
  readonly sql: Sql;
  /** `pglite` when the embedded engine serves, `postgres` for a real server. */
  readonly kind: 'pglite' | 'postgres';
  /** Where the client connects (no credentials): for start-up messages. */
  readonly description: string;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** A PostgreSQL URL. Absent: embedded PGlite. */
  databaseUrl?: string | undefined;
  /** PGlite's directory; `memory://` (the default) keeps nothing. */
  dataDir?: string | undefined;
  /** Pool size for a real server (PGlite always gets one connection). */
  max?: number;
  /** Sent as the connection's `search_path`, to isolate tests in their own schema. */
  searchPath?: string;
  /**
   * Run-time parameters sent when each connection starts, such as `statement_timeout` and
   * `lock_timeout` (milliseconds). PGlite ignores start-up parameters (and enforces no statement
   * timeout even when one is set): they only take effect on a real server.
   */
  parameters?: Readonly<Record<string, string | number>>;
  /** `application_name` of the connections (shown in `pg_stat_activity`); the URL's wins. */
  applicationName?: string;
  /**
   * When another live process holds the PGlite data directory: `refuse` (the default) throws
   * {@link DataDirectoryInUse}; `join` connects to that process's database through its loopback
   * socket (one short-lived connection, for a CLI such as `keys:create`), so nothing opens the
   * directory twice.
   */
  whenHeld?: 'refuse' | 'join';
}

const quiet = { onnotice: () => {} };

/**
 * A postgres.js client of a PGlite socket, whether this process serves it or a running server
 * does: one connection (PGlite has one session and answers one connection at a time), no TLS.
 */
export function pgliteClient(host: string, port: number, connection?: Record<string, string | number>): Sql {
  return postgres({
    host,
    port,
    database: 'postgres',
    username: 'postgres',
    max: 1,
    ssl: false,
    ...quiet,
    ...(connection ? { connection } : {}),
  });
}

/**
 * Opens the database the same way everywhere: postgres.js against `databaseUrl`, or against an
 * embedded PGlite reached through pglite-socket on an ephemeral loopback port (so several
 * instances with different data directories never collide) with a one-connection pool.
 */
export async function connect(options: ConnectOptions = {}): Promise<Database> {
  const parameters: Record<string, string | number> = {
    ...(options.applicationName ? { application_name: options.applicationName } : {}),
    ...options.parameters,
    ...(options.searchPath ? { search_path: options.searchPath } : {}),
  };
  const connection = Object.keys(parameters).length > 0 ? parameters : undefined;
  if (options.databaseUrl) {
    const sql = postgres(options.databaseUrl, {
      max: options.max ?? 10,
      ...quiet,
      ...(connection ? { connection } : {}),
    });
    const url = new URL(options.databaseUrl);
    return {
      sql,
      kind: 'postgres',
      description: `PostgreSQL at ${url.hostname}:${url.port || 5432}${url.pathname}`,
      close: () => sql.end({ timeout: 5 }),
    };
  }
  const client = (host: string, port: number) => pgliteClient(host, port, connection);
  const engine = await servePgliteDataDir(options.dataDir, options.whenHeld);
  const sql = client(engine.host, engine.port);
  return {
    sql,
    kind: 'pglite',
    description: engine.description,
    async close() {
      await sql.end({ timeout: 5 });
      await engine.stop();
    },
  };
}

/** Where a PGlite data directory is served: this process's engine, or a running server's. */
export interface PgliteEndpoint {
  readonly host: string;
  readonly port: number;
  /** For start-up messages: the directory, and whose process serves it. */
  readonly description: string;
  /** Stops this process's engine and releases the directory (nothing when it joined another's). */
  stop(): Promise<void>;
}

/**
 * Serves the PGlite of `dataDir` (`memory://`, the default, keeps nothing) through pglite-socket
 * on an ephemeral loopback port, so several instances with different data directories never
 * collide, under the directory's lock. When another live process holds the directory:
 * `refuse` (the default) throws {@link DataDirectoryInUse}; `join` answers that process's port
 * (for a CLI such as `keys:create`), so nothing opens the directory twice.
 */
export async function servePgliteDataDir(
  dataDir = 'memory://',
  whenHeld: 'refuse' | 'join' = 'refuse',
): Promise<PgliteEndpoint> {
  const inMemory = dataDir.startsWith('memory://');
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  const taken = inMemory ? undefined : lockDataDir(dataDir);
  if (taken && 'held' in taken) {
    const { port } = taken.held;
    if (whenHeld !== 'join' || port === undefined) throw new DataDirectoryInUse(dataDir, taken.held);
    return {
      host: '127.0.0.1',
      port,
      description: `embedded PGlite in ${dataDir}, through the running server (process ${taken.held.pid})`,
      stop: () => Promise.resolve(),
    };
  }
  const lock = taken?.lock;
  let db: PGlite;
  let server: PGLiteSocketServer;
  try {
    db = await PGlite.create(dataDir);
    // A second connection slot for a CLI joining through the lock's port (queries are queued
    // one at a time, transactions kept whole, by pglite-socket).
    server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: inMemory ? 1 : 4 });
    await server.start();
  } catch (error) {
    lock?.release();
    throw error;
  }
  const [host, port] = server.getServerConn().split(':');
  lock?.setPort(Number(port));
  return {
    host: host ?? '127.0.0.1',
    port: Number(port),
    description: inMemory ? 'embedded PGlite (in memory)' : `embedded PGlite in ${dataDir}`,
    async stop() {
      await server.stop();
      await db.close();
      lock?.release();
    },
  };
}
