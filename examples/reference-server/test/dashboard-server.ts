import { childDatabaseUrl, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { startServer } from '../src/server';

/**
 * The reference server the dashboard's browser tests drive: one API key with every scope,
 * retries 200 ms apart (a delivery dies within a second), loopback receivers allowed, on the
 * PGlite this test process shares or a schema of the real PostgreSQL.
 */
export function startDashboardServer(
  db: TestDatabase,
  key: { key: string; account: string },
  env: Record<string, string> = {},
): Promise<{ url: string; close(): Promise<void> }> {
  return startServer({
    ...(realPostgres ? {} : { database: db }),
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      HOLDFAST_DATA_DIR: 'memory://',
      HOLDFAST_API_KEYS: JSON.stringify([{ ...key, scopes: ['*'] }]),
      HOLDFAST_RETRY_SCHEDULE: '200ms,200ms',
      HOLDFAST_ALLOW_PRIVATE_DESTINATIONS: '1',
      DATABASE_URL: realPostgres ? childDatabaseUrl(db) : '',
      ...env,
    },
  });
}
