import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type Database } from '@holdfast/pg';
import { createTestDatabase } from '@holdfast/pg/testing';
import { startServer } from '../src/server';

// Helpers shared by the webhook test files: a server over real HTTP on port 0 (PGlite in memory,
// or a fresh schema of the real PostgreSQL when DATABASE_URL is set), a real local receiver on
// 127.0.0.1, and a small JSON client.

export const realPostgres = Boolean(process.env.DATABASE_URL);

export const ACCOUNT = 'acct_webhooks_a';
export const OTHER_ACCOUNT = 'acct_webhooks_b';
export const KEYS = {
  all: 'hf_test_webhooksAllScopes000000000001',
  read: 'hf_test_webhooksReadOnly0000000000001',
  none: 'hf_test_webhooksNoScopes0000000000001',
  other: 'hf_test_webhooksOtherAccount00000001',
} as const;

export const API_KEYS = JSON.stringify([
  { key: KEYS.all, account: ACCOUNT, scopes: ['*'] },
  { key: KEYS.read, account: ACCOUNT, scopes: ['webhooks:read'] },
  { key: KEYS.none, account: ACCOUNT, scopes: ['orders:read'] },
  { key: KEYS.other, account: OTHER_ACCOUNT, scopes: ['*'] },
]);

/** Where a test server keeps its data, and how to remove it afterwards. */
export interface TestStorage {
  /** DATABASE_URL or HOLDFAST_DATA_DIR for the server. */
  readonly env: Record<string, string>;
  /** DATABASE_URL of the server's schema on real PostgreSQL; undefined on PGlite. */
  readonly databaseUrl: string | undefined;
  /** On PGlite in memory: a schema of the PGlite this test process shares, for the server. */
  readonly database?: Database;
  drop(): Promise<void>;
}

/**
 * Fresh storage: a new schema of the real PostgreSQL (DATABASE_URL with its search_path), or a
 * schema of the PGlite this test process shares (kept across a server's restart: the caller
 * closes it with `drop`).
 */
export async function createStorage(): Promise<TestStorage> {
  const base = process.env.DATABASE_URL;
  if (!base) {
    const database = await createTestDatabase({ max: 1 });
    return {
      env: { DATABASE_URL: '', HOLDFAST_DATA_DIR: 'memory://' },
      databaseUrl: undefined,
      database,
      drop: () => database.close(),
    };
  }
  const schema = `t_wh_${randomBytes(6).toString('hex')}`;
  const admin = await connect({ databaseUrl: base, max: 1 });
  await admin.sql.unsafe(`create schema ${schema}`);
  await admin.close();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    env: { DATABASE_URL: url.toString() },
    databaseUrl: url.toString(),
    async drop() {
      const db = await connect({ databaseUrl: base, max: 1 });
      await db.sql.unsafe(`drop schema if exists ${schema} cascade`);
      await db.close();
    },
  };
}

export interface TestServer {
  url: string;
  storage: TestStorage;
  close(): Promise<void>;
}

/**
 * Starts the reference server on a free port (or `env.PORT`) with the test keys and `env` on
 * top. Without `storage` it gets fresh storage of its own, dropped on close.
 */
export async function startTestServer(
  env: Record<string, string> = {},
  storage?: TestStorage,
): Promise<TestServer> {
  const own = storage ? undefined : await createStorage();
  const used = storage ?? own;
  if (!used) throw new Error('unreachable');
  const server = await startServer({
    ...(used.database ? { database: used.database } : {}),
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      NODE_ENV: 'test',
      // Quiet even when a test sets NODE_ENV=production (silent under test, info otherwise).
      HOLDFAST_LOG_LEVEL: 'warn',
      HOLDFAST_API_KEYS: API_KEYS,
      HOLDFAST_RATE_LIMIT: '10000/1s',
      HOLDFAST_ADDRESS_RATE_LIMIT: '100000/1s',
      HOLDFAST_ALLOW_PRIVATE_DESTINATIONS: '1',
      ...used.env,
      ...env,
    },
  });
  return {
    url: server.url,
    storage: used,
    async close() {
      await server.close();
      await own?.drop();
    },
  };
}

function portOf(address: AddressInfo | string | null): number {
  if (address === null || typeof address === 'string') throw new Error('not listening on TCP');
  return address.port;
}

/** A TCP port that was free a moment ago, for a server that must keep its URL across a restart. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = portOf(probe.address());
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: test assertions walk arbitrary JSON bodies
  body: any;
}

/** A JSON request to the server with a bearer key (pass `key: null` for none). */
export async function api(
  base: string,
  method: string,
  path: string,
  options: { key?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? KEYS.all : options.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  let body: string | null = null;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== null && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  const response = await fetch(new URL(path, base), { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  received: ReceivedRequest[];
  /** What the next requests get; the default answers 204. */
  respond: (request: ReceivedRequest) => { status: number; body?: string };
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1 that records every request. */
export async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    received: [],
    respond: () => ({ status: 204 }),
    close: async () => {},
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      receiver.received.push(request);
      const answer = receiver.respond(request);
      res.statusCode = answer.status;
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = portOf(server.address());
  receiver.url = `http://127.0.0.1:${port}/webhook`;
  receiver.close = () =>
    new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((error) => (error ? reject(error) : resolve()));
    });
  return receiver;
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
