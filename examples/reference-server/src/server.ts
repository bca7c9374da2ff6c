import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createKey, dbApiKeyStore, keyAccounts } from '@holdfast/api-keys';
import type { Db, Transaction } from '@holdfast/db';
import { migrate, migrationReadiness } from '@holdfast/db/migrate';
import { pgListener } from '@holdfast/db/pg';
import { fromPostgres, postgresTransaction } from '@holdfast/db/postgres';
import { schedulePurge } from '@holdfast/idempotency';
import type { Database } from '@holdfast/pg';
import type { PgDatabase } from '@holdfast/pg/node-postgres';
import { createHonoServer } from '@holdfast/request-guards/node';
import type pg from 'pg';
import { buildApp } from './app';
import { type Config, loadConfig } from './config';
import type { Database as DbAccess, Deps } from './context';
import { allMigrations, cursorKeyring, openPgPools, type Pools } from './db';
import { DEMO_RECEIVER_PREFIX, demoReceiverRoutes } from './demo/receiver';
import { databaseIsEmpty, httpApiCall, type SeedSummary, seedDemoData } from './demo/seed';
import { type HealthServer, serveHealth } from './health';
import { startOperations } from './operations';
import { PROBLEM_TYPE_BASE } from './problems';
import { startSettlementWorker } from './settlement';
import { announceSourceAddresses } from './source-addresses';
import { startWebhookWorkers } from './workers';

/** Options of {@link startServer}. */
export interface StartOptions {
  /** Variables merged over `process.env` (CONTRACT section 8). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Command-line flags: `--api-only`, `--worker-only`. */
  argv?: readonly string[];
  /**
   * An open database to use instead of opening one from the configuration; the caller keeps it
   * and closes it after `close()`. Tests pass one schema of a PGlite their process shares. The
   * API and the workers then share it (as they share PGlite's one connection anyway).
   */
  database?: Database;
  /** The clock of the API and the workers, in ms since the epoch. @defaultValue `Date.now` */
  now?: () => number;
}

/** A running reference server. */
export interface RunningServer {
  /** `http://host:port`, or an empty string for a worker-only process. */
  readonly url: string;
  readonly config: Config;
  /** Statements on the pool this process serves from (the API's; the workers' in a worker-only process). */
  readonly db: Db;
  /** Transactions on that pool. */
  readonly transaction: Transaction<unknown>;
  /** That pool, when the server opened it (absent with `database`): tests end it to see the database go. */
  readonly pool: pg.Pool | undefined;
  /** Where the data lives, for the start-up banner. */
  readonly database: string;
  /** `http://host:port/metrics` when `HOLDFAST_METRICS_PORT` is set. */
  readonly metricsUrl: string | undefined;
  /** `http://host:port` of `/livez` and `/readyz` when `HOLDFAST_HEALTH_PORT` is set. */
  readonly healthUrl: string | undefined;
  /** Statements on the workers' pool (the same as `db` on PGlite, in a worker-only process, or with `database`). */
  readonly workerDb: Db;
  /** A demo key created on this start (first run of a fresh database only): shown once. */
  readonly demoKey: string | undefined;
  /** The demo data set written with the demo key on this start, if it was. */
  readonly demoData: SeedSummary | undefined;
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
  const given = options.database;
  // A connection that fails while idle in a pool: the pool has dropped it already, so it is said
  // once the logger exists, and nothing else is done.
  let idleErrorLog: ((error: Error) => void) | undefined;
  const pools: Pools<PgDatabase> | undefined = given
    ? undefined
    : await openPgPools(config, (error) => idleErrorLog?.(error));
  const closeDatabase = () => pools?.close() ?? Promise.resolve();
  const givenAccess: DbAccess | undefined = given
    ? { db: fromPostgres(given.sql), transaction: postgresTransaction(given.sql) }
    : undefined;
  // The pool this process serves from: the API's, or the workers' in a worker-only process.
  // Start-up work (migrations, seeding) runs on the workers' pool, which has no statement timeout.
  const served = pools ? (pools.api ?? pools.worker) : undefined;
  const api: DbAccess = givenAccess ?? (served as PgDatabase);
  const worker: DbAccess = givenAccess ?? (pools as Pools<PgDatabase>).worker;
  const description = given?.description ?? (served as PgDatabase).description;
  const startup = worker.db;
  const stoppables: Stoppable[] = [];
  let http: Server | undefined;
  let health: HealthServer | undefined;
  let ops: Awaited<ReturnType<typeof startOperations>> | undefined;
  try {
    ops = await startOperations(config, api.db, env);
    const log = ops.log;
    idleErrorLog = (error) => log.warn({ err: error.message }, 'an idle database connection failed');
    const migrations = await allMigrations();
    await migrate(startup, migrations);
    const keys = dbApiKeyStore(startup);
    for (const key of config.apiKeys) await keys.save(key);
    let demoKey: string | undefined;
    if (config.seedDemoKey) {
      if ((await keyAccounts(startup)).length === 0) demoKey = await createKey(keys, 'acct_demo', ['*']);
    }
    // Egress: refuse a start that cannot bind its addresses, then publish the list (notifying on a change).
    await announceSourceAddresses(worker, config, Date.now, ops.log);
    const privateUrlPrefixes: string[] = [];
    const deps: Deps = {
      ...api,
      privateUrlPrefixes,
      config,
      keyring: await cursorKeyring(startup, config.cursorSecret),
      now: options.now ?? Date.now,
      redis: ops.redis,
      log: ops.log,
      metrics: ops.metrics,
    };
    const ready = migrationReadiness(
      api.db,
      migrations.map((migration) => migration.id),
    );
    let url = '';
    let demoData: SeedSummary | undefined;
    // The demo's built-in receiver, outside production: its own URLs are the one loopback
    // destination allowed without HOLDFAST_ALLOW_PRIVATE_DESTINATIONS, so a plain start shows webhooks.
    const demoReceiver = !config.production;
    if (config.role !== 'worker') {
      const app = buildApp(deps, demoReceiver ? { ready, rootRoutes: [demoReceiverRoutes] } : { ready });
      const server = createHonoServer(app.fetch, {
        hostname: config.host,
        limits: config.http,
        backpressure: { maxPipelined: config.http.maxPipelined },
        typeBase: PROBLEM_TYPE_BASE,
      });
      server.listen(config.port, config.host);
      http = server;
      await new Promise<void>((resolve, reject) => {
        server.once('listening', () => resolve());
        server.once('error', reject);
      });
      const address = server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      url = `http://${host}:${address.port}`;
      if (demoReceiver) {
        privateUrlPrefixes.push(`${url}${DEMO_RECEIVER_PREFIX}`);
        // Bound to every address: `npm run seed` and browsers name it by loopback.
        if (address.address === '0.0.0.0' || address.address === '::')
          privateUrlPrefixes.push(`http://127.0.0.1:${address.port}${DEMO_RECEIVER_PREFIX}`);
      }
      if (demoKey !== undefined && config.seedDemoData && (await databaseIsEmpty(api.db))) {
        // Through the API itself, over HTTP, as a client would: a failure leaves a working server.
        demoData = await seedDemoData({
          call: httpApiCall(url, demoKey),
          receiverBase: demoReceiver ? url : undefined,
        }).catch((error: unknown) => {
          if (deps.log) deps.log.error({ err: error }, 'the demo data set could not be written');
          else console.error('the demo data set could not be written:', error);
          return undefined;
        });
      }
    }
    if (config.role !== 'api') {
      // LISTEN holds one connection of the workers' pool for good: only where the pool has another
      // for the rounds (PGlite has no second session; with one connection the workers poll).
      const workerPool = pools?.worker;
      const listener =
        workerPool?.kind === 'postgres' && config.database.workerPoolSize > 1
          ? pgListener(workerPool.pool)
          : undefined;
      stoppables.push(startWebhookWorkers({ ...deps, ...worker, listener }));
      stoppables.push(startSettlementWorker({ database: worker, now: deps.now }));
      stoppables.push(
        schedulePurge(worker.db, {
          onError: (error) => console.error('idempotency purge failed:', error),
        }),
      );
    }
    const { healthPort } = config.database;
    if (healthPort !== undefined) health = await serveHealth(ready, healthPort, config.host);
    const healthServer = health;
    const operations = ops;
    let closing: Promise<void> | undefined;
    return {
      url,
      config,
      db: api.db,
      transaction: api.transaction,
      pool: pools ? (pools.api ?? pools.worker).pool : undefined,
      database: description,
      metricsUrl: ops.metricsUrl,
      healthUrl: health?.url,
      workerDb: worker.db,
      demoKey,
      demoData,
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
          await healthServer?.close();
          await operations.close();
          await closeDatabase();
        })();
        return closing;
      },
    };
  } catch (error) {
    http?.close();
    await health?.close();
    await Promise.all(stoppables.map((s) => s.stop()));
    await ops?.close();
    await closeDatabase();
    throw error;
  }
}
