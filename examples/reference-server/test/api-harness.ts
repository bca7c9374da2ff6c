import { childDatabaseUrl, createTestDatabase, realPostgres } from '@holdfast/pg/testing';
import { type RunningServer, startServer } from '../src/server';

// A reference server over real HTTP on port 0 for the API tests, on a fresh schema: of the PGlite
// this test process shares across files, or of the real PostgreSQL when DATABASE_URL is set
// (dropped on stop).

export const ACCOUNT = 'acct_api_a';
export const OTHER_ACCOUNT = 'acct_api_b';
export const KEYS = {
  all: 'hf_test_apiAllScopes00000000000000001',
  ordersRead: 'hf_test_apiOrdersRead000000000000001',
  other: 'hf_test_apiOtherAccount0000000000001',
} as const;

export interface TestServer {
  readonly server: RunningServer;
  readonly url: string;
  /** Ends the server's pool under it (the database going away). */
  endDatabase(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a server with the test keys; `env` adds or overrides variables, `now` is its clock. */
export async function startTestServer(
  env: Record<string, string> = {},
  options: { now?: () => number } = {},
): Promise<TestServer> {
  const db = await createTestDatabase({ max: 1 });
  const server = await startServer({
    ...(realPostgres ? {} : { database: db }),
    ...(options.now ? { now: options.now } : {}),
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      NODE_ENV: 'test',
      // Quiet even when a test sets NODE_ENV=production (silent under test, info otherwise).
      HOLDFAST_LOG_LEVEL: 'warn',
      DATABASE_URL: realPostgres ? childDatabaseUrl(db) : '',
      HOLDFAST_DATA_DIR: 'memory://',
      HOLDFAST_API_KEYS: JSON.stringify([
        { key: KEYS.all, account: ACCOUNT, scopes: ['*'] },
        { key: KEYS.ordersRead, account: ACCOUNT, scopes: ['orders:read'] },
        { key: KEYS.other, account: OTHER_ACCOUNT, scopes: ['*'] },
      ]),
      HOLDFAST_RATE_LIMIT: '100000/1s',
      HOLDFAST_ADDRESS_RATE_LIMIT: '100000/1s',
      ...env,
    },
  });
  return {
    server,
    url: server.url,
    endDatabase: () => (server.pool ? server.pool.end() : db.sql.end({ timeout: 1 })),
    async stop() {
      try {
        await server.close();
      } finally {
        await db.close();
      }
    },
  };
}

/** Parsed JSON as the tests read it: any property, checked by the assertions. */
export interface Loose {
  readonly [key: string]: Loose | undefined;
}

/** A JSON answer: status, headers and the parsed body (undefined when empty). */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Loose;
}

/** Sends `method path` with an optional JSON body and headers (the `all` key unless given). */
export async function call(
  base: string,
  method: string,
  path: string,
  options: { body?: unknown; key?: string | null; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? KEYS.all : options.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  }
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? {} : JSON.parse(text) };
}
