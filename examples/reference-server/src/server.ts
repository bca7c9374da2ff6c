import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createKey } from '@holdfast/api-keys';
import { postgresApiKeyStore } from '@holdfast/api-keys/postgres';
import { schedulePurge } from '@holdfast/idempotency';
import { postgresIdempotencyStore } from '@holdfast/idempotency/postgres';
import type { Database } from '@holdfast/pg';
import { migrate } from '@holdfast/pg-migrate';
import { createHonoServer } from '@holdfast/request-guards/node';
import type postgres from 'postgres';
import { buildApp } from './app';
import { type Config, loadConfig } from './config';
import type { Deps } from './context';
import { allMigrations, cursorKeyring, openDatabase } from './db';
import { startOperations } from './operations';
import { startSettlementWorker } from './settlement';
import { startWebhookWorkers } from './workers';

/** Options of {@link startServer}. */
export interface StartOptions {
  /** Variables merged over `process.env` (CONTRACT section 8). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Command-line flags: `--api-only`, `--worker-only`. */
  argv?: readonly string[];
  /**
   * An open database to use instead of opening one from the configuration; the caller keeps it
   * and closes it after `close()`. Tests pass one schema of a PGlite their process shares.
   */
  database?: Database;
}

/** A running reference server. */
export interface RunningServer {
  /** `http://host:port`, or an empty string for a worker-only process. */
  readonly url: string;
  readonly config: Config;
  readonly sql: postgres.Sql;
  /** Where the data lives, for the start-up banner. */
  readonly database: string;
  /** `http://host:port/metrics` when `HOLDFAST_METRICS_PORT` is set. */
  readonly metricsUrl: string | undefined;
  /** A demo key created on this start (first run of a fresh database only): shown once. */
  readonly demoKey: string | undefined;
  /** Graceful stop: no new connections, in-flight requests and worker rounds finish, then the database closes. */
  close(): Promise<void>;
}

interface Stoppable {
  stop(): Promise<void> | void;
}

/**
 * Starts the reference server as `npm start` does: reads the configuration, opens the
 * database (PostgreSQL or embedded PGlite), migrates under a lock, seeds keys, then serves
 * HTTP (unless worker-only) and runs the background workers (unless API-only).
 *
 * @example
 * ```ts
 * const server = await startServer({ env: { PORT: '0', HOLDFAST_DATA_DIR: 'memory://' } });
 * await fetch(`${server.url}/healthz`);
 * await server.close();
 * ```
 */
export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const env = { ...process.env, ...options.env };
  const config = loadConfig(env, options.argv ?? []);
  const db = options.database ?? (await openDatabase(config));
  const closeDatabase = () => (options.database ? Promise.resolve() : db.close());
  const stoppables: Stoppable[] = [];
  let http: Server | undefined;
  let ops: Awaited<ReturnType<typeof startOperations>> | undefined;
  try {
    ops = await startOperations(config, db.sql, env);
    await migrate(db.sql, await allMigrations());
    const keys = postgresApiKeyStore(db.sql);
    for (const key of config.apiKeys) await keys.save(key);
    let demoKey: string | undefined;
    if (config.seedDemoKey) {
      const [row] = await db.sql<{ count: number }[]>`select count(*)::int as count from holdfast_api_keys`;
      if (row?.count === 0) demoKey = await createKey(keys, 'acct_demo', ['*']);
    }
    const deps: Deps = {
      sql: db.sql,
      config,
      keyring: await cursorKeyring(db.sql, config.cursorSecret),
      now: Date.now,
      redis: ops.redis,
      log: ops.log,
      metrics: ops.metrics,
    };
    let url = '';
    if (config.role !== 'worker') {
      const app = buildApp(deps);
      const server = createHonoServer(app.fetch, { hostname: config.host, limits: config.http });
      server.listen(config.port, config.host);
      http = server;
      await new Promise<void>((resolve, reject) => {
        server.once('listening', () => resolve());
        server.once('error', reject);
      });
      const address = server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      url = `http://${host}:${address.port}`;
    }
    if (config.role !== 'api') {
      stoppables.push(startWebhookWorkers(deps));
      stoppables.push(startSettlementWorker({ sql: db.sql, now: deps.now }));
      stoppables.push(
        schedulePurge(postgresIdempotencyStore(db.sql), {
          onError: (error) => console.error('idempotency purge failed:', error),
        }),
      );
    }
    const operations = ops;
    let closing: Promise<void> | undefined;
    return {
      url,
      config,
      sql: db.sql,
      database: db.description,
      metricsUrl: ops.metricsUrl,
      demoKey,
      close() {
        closing ??= (async () => {
          const server = http;
          if (server) {
            const closed = new Promise<void>((resolve) => server.close(() => resolve()));
            server.closeIdleConnections();
            const force = setTimeout(() => server.closeAllConnections(), 5000);
            await closed;
            clearTimeout(force);
          }
          await Promise.all(stoppables.map((s) => s.stop()));
          await operations.close();
          await closeDatabase();
        })();
        return closing;
      },
    };
  } catch (error) {
    http?.close();
    await Promise.all(stoppables.map((s) => s.stop()));
    await ops?.close();
    await closeDatabase();
    throw error;
  }
}
