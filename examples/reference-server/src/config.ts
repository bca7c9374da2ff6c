import { resolve } from 'node:path';
import { parseBearer } from '@holdfast/api-keys';
import type { RateLimitConfig } from '@holdfast/rate-limit';
import { type EgressOptions, egressSourceRanges, parseRetrySchedule } from '@holdfast/webhook-delivery';
import type { WindowQuota } from '@holdfast/webhook-portal';

/** One key from `HOLDFAST_API_KEYS` (CONTRACT section 3). */
export interface SeedKey {
  readonly key: string;
  readonly account: string;
  readonly scopes: readonly string[];
}

/** How hard this process's delivery worker pushes. */
export interface DeliveryLimits {
  /** Attempts in flight in this process (`HOLDFAST_DELIVERY_CONCURRENCY`, default 128). */
  readonly concurrency: number;
  /**
   * Attempts in flight per endpoint across every process, the ceiling of its adaptive limit
   * (`HOLDFAST_DELIVERY_PER_ENDPOINT`, default 200). One process sends one endpoint at most three
   * quarters of its `concurrency` (96 of 128), so the default leaves a second process room to add
   * throughput to a busy endpoint; at a ceiling one process fills, more processes only share the
   * same places (bench/delivery).
   */
  readonly perEndpoint: number;
  /** Idle wait between polls (`HOLDFAST_DELIVERY_POLL`, default 100 ms). */
  readonly pollMs: number;
  /**
   * The share of `concurrency` one account's endpoints hold while another account waits
   * (`HOLDFAST_DELIVERY_ACCOUNT_SHARE`, default 0.25): above 0, at most 1.
   */
  readonly accountShare: number;
}

/** Node HTTP server limits against slow and greedy clients. */
export interface HttpLimits {
  /** All request headers within this (`HOLDFAST_HEADERS_TIMEOUT`, default 10 s), else 408. */
  readonly headersTimeoutMs: number;
  /** The whole request within this (`HOLDFAST_REQUEST_TIMEOUT`, default 30 s), else 408. */
  readonly requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this (`HOLDFAST_KEEP_ALIVE_TIMEOUT`, default 5 s). */
  readonly keepAliveTimeoutMs: number;
  /** Concurrent connections at most (`HOLDFAST_MAX_CONNECTIONS`, default 1024); more are closed at once. */
  readonly maxConnections: number;
  /**
   * Concurrent connections one client address (an IPv6 /64) may hold
   * (`HOLDFAST_MAX_CONNECTIONS_PER_ADDRESS`, default a quarter of `maxConnections`, 256): more
   * are answered 503 and closed at once, so no address can take every connection.
   */
  readonly maxConnectionsPerAddress: number;
  /**
   * IPv4 clients are grouped by this prefix for the connection caps, as IPv6 ones are by /64
   * (`HOLDFAST_IPV4_PREFIX`, default 24): one host often holds many addresses of one network.
   */
  readonly ipv4PrefixLength: number;
  /**
   * Unanswered pipelined requests one connection may hold (`HOLDFAST_MAX_PIPELINED`, default
   * 16): from half of them the connection is no longer read; a request past them closes it.
   */
  readonly maxPipelined: number;
  /**
   * Per client address on the routes anyone may call without a key (`/openapi.json`, `/docs`,
   * `/problems`, `/dashboard`, `/healthz`): `HOLDFAST_PUBLIC_RATE_LIMIT`, default 50/1s, burst
   * 100. `/livez` and `/readyz` are never limited.
   */
  readonly publicRateLimit: RateLimitConfig;
}

/** The database pools of this process and the API's time limits (issue 28). */
export interface DatabaseLimits {
  /** An API statement running longer is cancelled and answered 503 (`HOLDFAST_STATEMENT_TIMEOUT`, default 5 s). */
  readonly statementTimeoutMs: number;
  /** An API statement waiting longer for a lock gives up, 503 (`HOLDFAST_LOCK_TIMEOUT`, default 2 s). */
  readonly lockTimeoutMs: number;
  /** Connections of the API's pool (`HOLDFAST_API_POOL_SIZE`, default 10). */
  readonly apiPoolSize: number;
  /** Connections of the workers' pool, no timeouts (`HOLDFAST_WORKER_POOL_SIZE`, default 10). */
  readonly workerPoolSize: number;
  /** Port serving `/livez` and `/readyz` apart from the API (`HOLDFAST_HEALTH_PORT`), on `HOST`; absent: none. */
  readonly healthPort: number | undefined;
}

/** Which loops this process runs: the HTTP API, the background workers, or both. */
export type Role = 'all' | 'api' | 'worker';

/** The server's configuration, read once at start from the environment (CONTRACT section 8). */
export interface Config {
  readonly port: number;
  readonly host: string;
  /** A PostgreSQL URL; absent means embedded PGlite under `dataDir`. */
  readonly databaseUrl: string | undefined;
  /** PGlite's directory, or `memory://` for an in-memory database (tests). */
  readonly dataDir: string;
  readonly production: boolean;
  readonly apiKeys: readonly SeedKey[];
  /** Raw `HOLDFAST_RECEIVER_SECRETS` (parsed by the receiver wiring). */
  readonly receiverSecrets: string | undefined;
  /** Retry delays in ms (`HOLDFAST_RETRY_SCHEDULE`), or undefined for the contract's schedule. */
  readonly retrySchedule: readonly number[] | undefined;
  readonly allowPrivateDestinations: boolean;
  readonly rateLimit: RateLimitConfig;
  /**
   * Per client address, for requests with a missing, malformed or unknown key and badly signed
   * webhooks (CONTRACT section 10): `HOLDFAST_ADDRESS_RATE_LIMIT`, default 20/1s, burst 40.
   */
  readonly addressRateLimit: RateLimitConfig;
  /** Secret for signing cursors; absent means one generated once and kept in the database. */
  readonly cursorSecret: string | undefined;
  readonly role: Role;
  /** Days of failing attempts before an endpoint is disabled (`HOLDFAST_DISABLE_AFTER_DAYS`). */
  readonly disableAfterDays: number;
  /** Idempotency key retention in hours, at least 24 (`HOLDFAST_IDEMPOTENCY_RETENTION_HOURS`). */
  readonly idempotencyRetentionHours: number;
  /** Days of delivery history kept, whole days, at least 1 (`HOLDFAST_DELIVERY_RETENTION_DAYS`). */
  readonly deliveryRetentionDays: number;
  /** Seed a demo key on a fresh database (`npm start`), off in tests and production. */
  readonly seedDemoKey: boolean;
  /**
   * Seed the demo data set (`HOLDFAST_SEED_DEMO_DATA`) with the demo key on an empty database;
   * on where the demo key is, never in production.
   */
  readonly seedDemoData: boolean;
  /** How long a 202 payment stays `processing` (`HOLDFAST_PAYMENT_SETTLE_DELAY`, default 2s). */
  readonly paymentSettleDelayMs: number;
  /** How slow clients are cut off (CONTRACT section 10). */
  readonly http: HttpLimits;
  /** The delivery workers of this process. */
  readonly delivery: DeliveryLimits;
  /** Redis for rate limits shared by every process (`HOLDFAST_REDIS_URL`); absent: limits per process. */
  readonly redisUrl: string | undefined;
  /** How long a rate limit waits for Redis before this process limits on its own (`HOLDFAST_REDIS_TIMEOUT`, default 250 ms). */
  readonly redisTimeoutMs: number;
  /** Port of the Prometheus `/metrics` listener (`HOLDFAST_METRICS_PORT`), on `HOST`; absent: no metrics. */
  readonly metricsPort: number | undefined;
  /** Database pools, timeouts and the health port. */
  readonly database: DatabaseLimits;
  /** Webhook endpoints per account and mode at most (`HOLDFAST_MAX_ENDPOINTS`, default 16, as Stripe). */
  readonly maxEndpoints: number;
  /**
   * Where deliveries leave from (`HOLDFAST_EGRESS_ADDRESSES`, or `HOLDFAST_EGRESS_PROXY` with
   * `HOLDFAST_EGRESS_RANGES`), published at `/webhook-source-addresses`; absent: the system's choice.
   */
  readonly egress: EgressOptions | undefined;
  /** Quotas of the webhook-endpoint actions that make the sender send (CONTRACT section 12). */
  readonly endpointQuotas: EndpointQuotas;
}

/** The per-endpoint quotas of test events and recoveries, and how much one recovery re-queues. */
export interface EndpointQuotas {
  /** Test events per endpoint and window (`HOLDFAST_TEST_EVENT_QUOTA`, default `10/1m`). */
  readonly testEvents: WindowQuota;
  /** Recoveries per endpoint and window (`HOLDFAST_RECOVER_QUOTA`, default `5/1h`). */
  readonly recover: WindowQuota;
  /** Deliveries one recovery re-queues at most, oldest first (`HOLDFAST_RECOVER_MAX`, default 1000). */
  readonly recoverMax: number;
}

/** `limit/window` (`10/1m`) for a per-endpoint quota. */
function parseWindowQuota(raw: string | undefined, name: string, fallback: WindowQuota): WindowQuota {
  if (raw === undefined || raw.trim() === '') return fallback;
  const match = /^(\d+)\/(\S+)$/.exec(raw.trim());
  if (!match?.[1] || !match[2]) throw new ConfigError(`${name} must look like 10/1m (limit/window)`);
  const limit = Number(match[1]);
  const windowMs = parseDuration(match[2], name);
  if (limit < 1 || windowMs < 1000) {
    throw new ConfigError(`${name} needs a limit of at least 1 and a window of at least 1s`);
  }
  return { limit, windowMs };
}

/** A configuration mistake, reported at start with the variable's name and never its secret value. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

function parseHttpLimits(env: Readonly<Record<string, string | undefined>>): HttpLimits {
  const limits = {
    headersTimeoutMs: parseDuration(env.HOLDFAST_HEADERS_TIMEOUT || '10s', 'HOLDFAST_HEADERS_TIMEOUT'),
    requestTimeoutMs: parseDuration(env.HOLDFAST_REQUEST_TIMEOUT || '30s', 'HOLDFAST_REQUEST_TIMEOUT'),
    keepAliveTimeoutMs: parseDuration(env.HOLDFAST_KEEP_ALIVE_TIMEOUT || '5s', 'HOLDFAST_KEEP_ALIVE_TIMEOUT'),
    maxConnections: positiveInteger(env.HOLDFAST_MAX_CONNECTIONS, 'HOLDFAST_MAX_CONNECTIONS', 1024),
  };
  const maxConnectionsPerAddress = positiveInteger(
    env.HOLDFAST_MAX_CONNECTIONS_PER_ADDRESS,
    'HOLDFAST_MAX_CONNECTIONS_PER_ADDRESS',
    Math.max(1, Math.floor(limits.maxConnections / 4)),
  );
  // Node refuses a header timeout longer than the request timeout.
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new ConfigError('HOLDFAST_HEADERS_TIMEOUT must not exceed HOLDFAST_REQUEST_TIMEOUT');
  }
  const ipv4PrefixLength = Number(env.HOLDFAST_IPV4_PREFIX || '24');
  if (!Number.isInteger(ipv4PrefixLength) || ipv4PrefixLength < 8 || ipv4PrefixLength > 32) {
    throw new ConfigError('HOLDFAST_IPV4_PREFIX must be an integer from 8 to 32');
  }
  const maxPipelined = positiveInteger(env.HOLDFAST_MAX_PIPELINED, 'HOLDFAST_MAX_PIPELINED', 16);
  if (maxPipelined < 2) throw new ConfigError('HOLDFAST_MAX_PIPELINED must be at least 2');
  const publicRateLimit = parseRateLimit(env.HOLDFAST_PUBLIC_RATE_LIMIT, 'HOLDFAST_PUBLIC_RATE_LIMIT', {
    limit: 50,
    windowMs: 1000,
    burst: 100,
  });
  return { ...limits, maxConnectionsPerAddress, ipv4PrefixLength, maxPipelined, publicRateLimit };
}

/** A fraction above 0 and at most 1 from `raw` (`0.25`), `fallback` when unset. */
function parseShare(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!(value > 0 && value <= 1)) throw new ConfigError(`${name} must be a number above 0 and at most 1`);
  return value;
}

/** A positive integer from `raw`, `fallback` when unset. */
function positiveInteger(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new ConfigError(`${name} must be a positive integer`);
  return value;
}

/**
 * Parses a duration such as `500ms`, `1s`, `5m`, `2h` or `1d` into milliseconds: the syntax of
 * a retry schedule's entries (`parseRetrySchedule` of `@holdfast/webhook-delivery`), one entry.
 *
 * @example
 * ```ts
 * parseDuration('30m'); // 1_800_000
 * ```
 */
function parseDuration(text: string, variable = 'duration'): number {
  const [ms, ...more] = text.includes(',') ? [] : parseSchedule(text.trim(), variable);
  if (ms === undefined || more.length > 0)
    throw new ConfigError(`${variable}: "${text}" is not a duration such as 500ms, 1s, 5m, 2h`);
  return ms;
}

/** `parseRetrySchedule` of `@holdfast/webhook-delivery`, its refusal naming the variable. */
function parseSchedule(text: string, variable: string): number[] {
  try {
    return parseRetrySchedule(text);
  } catch (error) {
    throw new ConfigError(`${variable}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function parseRateLimit(
  raw: string | undefined,
  name = 'HOLDFAST_RATE_LIMIT',
  fallback: RateLimitConfig = { limit: 100, windowMs: 1000, burst: 200 },
): RateLimitConfig {
  if (!raw) return fallback;
  const match = /^(\d+)\/([^:]+)(?::(\d+))?$/.exec(raw.trim());
  if (!match?.[1] || !match[2]) {
    throw new ConfigError(`${name} must look like 100/1s or 100/1s:200 (limit/window[:burst])`);
  }
  const limit = Number(match[1]);
  const windowMs = parseDuration(match[2], name);
  const burst = match[3] ? Number(match[3]) : limit;
  if (limit < 1 || windowMs < 1 || burst < 1) throw new ConfigError(`${name} values must be positive`);
  return { limit, windowMs, burst };
}

const SCOPES = new Set([
  '*',
  'orders:read',
  'orders:write',
  'payments:read',
  'payments:write',
  'subscriptions:read',
  'subscriptions:write',
  'webhooks:read',
  'webhooks:write',
]);

/** The scopes of CONTRACT section 3. */
export const ALL_SCOPES: ReadonlySet<string> = SCOPES;

function parseApiKeys(raw: string | undefined): SeedKey[] {
  if (!raw || raw.trim() === '') return [];
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new ConfigError('HOLDFAST_API_KEYS is not valid JSON');
  }
  if (!Array.isArray(json)) throw new ConfigError('HOLDFAST_API_KEYS must be a JSON array');
  return json.map((entry: unknown, i) => {
    if (typeof entry !== 'object' || entry === null)
      throw new ConfigError(`HOLDFAST_API_KEYS[${i}] must be an object`);
    const { key, account, scopes } = entry as Record<string, unknown>;
    if (typeof key !== 'string' || !/^hf_(live|test)_[A-Za-z0-9_-]{16,}$/.test(key)) {
      throw new ConfigError(
        `HOLDFAST_API_KEYS[${i}].key must look like hf_live_<opaque> or hf_test_<opaque>`,
      );
    }
    // The rule is the bearer parser's own (its length bound and alphabet), not a copy: a key it
    // would never read from `Authorization` could only ever be refused. The message names the
    // position, never the key.
    if (parseBearer(`Bearer ${key}`)?.key !== key) {
      throw new ConfigError(
        `HOLDFAST_API_KEYS[${i}].key can never authenticate: the Authorization parser takes 16 to 128 base64url characters after hf_live_ or hf_test_`,
      );
    }
    if (typeof account !== 'string' || !/^acct_[A-Za-z0-9_-]+$/.test(account)) {
      throw new ConfigError(`HOLDFAST_API_KEYS[${i}].account must look like acct_<opaque>`);
    }
    if (!Array.isArray(scopes) || !scopes.every((s): s is string => typeof s === 'string' && SCOPES.has(s))) {
      throw new ConfigError(`HOLDFAST_API_KEYS[${i}].scopes must be an array of ${[...SCOPES].join(', ')}`);
    }
    return { key, account, scopes };
  });
}

function parseMetricsPort(raw: string | undefined, name = 'HOLDFAST_METRICS_PORT'): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`${name} must be a port number`);
  return port;
}

function parseDatabaseLimits(env: Readonly<Record<string, string | undefined>>): DatabaseLimits {
  return {
    statementTimeoutMs: parseDuration(env.HOLDFAST_STATEMENT_TIMEOUT || '5s', 'HOLDFAST_STATEMENT_TIMEOUT'),
    lockTimeoutMs: parseDuration(env.HOLDFAST_LOCK_TIMEOUT || '2s', 'HOLDFAST_LOCK_TIMEOUT'),
    apiPoolSize: positiveInteger(env.HOLDFAST_API_POOL_SIZE, 'HOLDFAST_API_POOL_SIZE', 10),
    workerPoolSize: positiveInteger(env.HOLDFAST_WORKER_POOL_SIZE, 'HOLDFAST_WORKER_POOL_SIZE', 10),
    healthPort: parseMetricsPort(env.HOLDFAST_HEALTH_PORT, 'HOLDFAST_HEALTH_PORT'),
  };
}

// Egress (source addresses published for receivers' allowlists): bound local addresses, or an
// HTTP CONNECT proxy and the ranges it sends from; never both.
const commaList = (raw: string | undefined): string[] =>
  (raw ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');

function parseEgress(env: Readonly<Record<string, string | undefined>>): EgressOptions | undefined {
  const addresses = commaList(env.HOLDFAST_EGRESS_ADDRESSES);
  const proxy = env.HOLDFAST_EGRESS_PROXY?.trim() || undefined;
  const ranges = commaList(env.HOLDFAST_EGRESS_RANGES);
  if (addresses.length > 0 && proxy !== undefined) {
    throw new ConfigError(
      'HOLDFAST_EGRESS_ADDRESSES and HOLDFAST_EGRESS_PROXY cannot both be set: bind addresses or send through a proxy',
    );
  }
  if (proxy === undefined && ranges.length > 0) {
    throw new ConfigError(
      'HOLDFAST_EGRESS_RANGES says what HOLDFAST_EGRESS_PROXY sends from: set the proxy too',
    );
  }
  if (proxy !== undefined && ranges.length === 0) {
    throw new ConfigError(
      'HOLDFAST_EGRESS_PROXY needs HOLDFAST_EGRESS_RANGES, the CIDR ranges it sends from',
    );
  }
  const egress: EgressOptions | undefined =
    addresses.length > 0 ? { addresses } : proxy !== undefined ? { proxy, ranges } : undefined;
  try {
    egressSourceRanges(egress);
  } catch (error) {
    const variable = addresses.length > 0 ? 'HOLDFAST_EGRESS_ADDRESSES' : 'HOLDFAST_EGRESS_PROXY/RANGES';
    throw new ConfigError(`${variable}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return egress;
}

function parseFlag(raw: string | undefined): boolean {
  return raw === '1' || raw === 'true' || raw === 'yes';
}

/**
 * Reads the configuration from `env` (CONTRACT sections 3, 6, 8 and 9). `argv` flags
 * `--api-only` and `--worker-only` override `HOLDFAST_ROLE`.
 *
 * @example
 * ```ts
 * const config = loadConfig(process.env, process.argv.slice(2));
 * ```
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  argv: readonly string[] = [],
): Config {
  const port = Number(env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError('PORT must be a port number');
  let role: Role = 'all';
  const rawRole = env.HOLDFAST_ROLE;
  if (rawRole !== undefined && rawRole !== '') {
    if (rawRole !== 'all' && rawRole !== 'api' && rawRole !== 'worker') {
      throw new ConfigError('HOLDFAST_ROLE must be all, api or worker');
    }
    role = rawRole;
  }
  if (argv.includes('--api-only')) role = 'api';
  if (argv.includes('--worker-only')) role = 'worker';
  const dataDir = env.HOLDFAST_DATA_DIR || '.data';
  const retentionHours = Number(env.HOLDFAST_IDEMPOTENCY_RETENTION_HOURS ?? 24);
  if (!Number.isFinite(retentionHours) || retentionHours < 24) {
    throw new ConfigError('HOLDFAST_IDEMPOTENCY_RETENTION_HOURS must be at least 24');
  }
  const deliveryRetentionDays = Number(env.HOLDFAST_DELIVERY_RETENTION_DAYS ?? 30);
  if (!Number.isInteger(deliveryRetentionDays) || deliveryRetentionDays < 1) {
    throw new ConfigError('HOLDFAST_DELIVERY_RETENTION_DAYS must be a whole number of days, at least 1');
  }
  const disableAfterDays = Number(env.HOLDFAST_DISABLE_AFTER_DAYS ?? 5);
  if (!Number.isFinite(disableAfterDays) || disableAfterDays < 1) {
    throw new ConfigError('HOLDFAST_DISABLE_AFTER_DAYS must be at least 1');
  }
  const schedule = env.HOLDFAST_RETRY_SCHEDULE?.trim();
  const production = env.NODE_ENV === 'production';
  const allowPrivateDestinations = parseFlag(env.HOLDFAST_ALLOW_PRIVATE_DESTINATIONS);
  // CONTRACT section 11: a production server that would send webhooks to private and loopback
  // addresses (cloud metadata, the database) is refused, not started with a warning.
  if (production && allowPrivateDestinations) {
    throw new ConfigError(
      'HOLDFAST_ALLOW_PRIVATE_DESTINATIONS=1 is for local development and tests only and cannot be set with NODE_ENV=production: unset one of them',
    );
  }
  return {
    port,
    host: env.HOST || '127.0.0.1',
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: dataDir.startsWith('memory://') ? dataDir : resolve(dataDir),
    production,
    apiKeys: parseApiKeys(env.HOLDFAST_API_KEYS),
    receiverSecrets: env.HOLDFAST_RECEIVER_SECRETS,
    retrySchedule: schedule ? parseSchedule(schedule, 'HOLDFAST_RETRY_SCHEDULE') : undefined,
    allowPrivateDestinations,
    rateLimit: parseRateLimit(env.HOLDFAST_RATE_LIMIT),
    addressRateLimit: parseRateLimit(env.HOLDFAST_ADDRESS_RATE_LIMIT, 'HOLDFAST_ADDRESS_RATE_LIMIT', {
      limit: 20,
      windowMs: 1000,
      burst: 40,
    }),
    cursorSecret: env.HOLDFAST_CURSOR_SECRET || undefined,
    role,
    disableAfterDays,
    idempotencyRetentionHours: retentionHours,
    deliveryRetentionDays,
    seedDemoKey:
      env.HOLDFAST_SEED_DEMO_KEY === undefined
        ? env.NODE_ENV !== 'test' && env.NODE_ENV !== 'production'
        : parseFlag(env.HOLDFAST_SEED_DEMO_KEY),
    seedDemoData:
      env.NODE_ENV !== 'production' &&
      (env.HOLDFAST_SEED_DEMO_DATA === undefined
        ? env.NODE_ENV !== 'test'
        : parseFlag(env.HOLDFAST_SEED_DEMO_DATA)),
    paymentSettleDelayMs: parseDuration(
      env.HOLDFAST_PAYMENT_SETTLE_DELAY || '2s',
      'HOLDFAST_PAYMENT_SETTLE_DELAY',
    ),
    http: parseHttpLimits(env),
    delivery: {
      concurrency: positiveInteger(env.HOLDFAST_DELIVERY_CONCURRENCY, 'HOLDFAST_DELIVERY_CONCURRENCY', 128),
      perEndpoint: positiveInteger(env.HOLDFAST_DELIVERY_PER_ENDPOINT, 'HOLDFAST_DELIVERY_PER_ENDPOINT', 200),
      pollMs: parseDuration(env.HOLDFAST_DELIVERY_POLL || '100ms', 'HOLDFAST_DELIVERY_POLL'),
      accountShare: parseShare(env.HOLDFAST_DELIVERY_ACCOUNT_SHARE, 'HOLDFAST_DELIVERY_ACCOUNT_SHARE', 0.25),
    },
    redisUrl: env.HOLDFAST_REDIS_URL || undefined,
    redisTimeoutMs: parseDuration(env.HOLDFAST_REDIS_TIMEOUT || '250ms', 'HOLDFAST_REDIS_TIMEOUT'),
    metricsPort: parseMetricsPort(env.HOLDFAST_METRICS_PORT),
    database: parseDatabaseLimits(env),
    maxEndpoints: positiveInteger(env.HOLDFAST_MAX_ENDPOINTS, 'HOLDFAST_MAX_ENDPOINTS', 16),
    egress: parseEgress(env),
    endpointQuotas: {
      testEvents: parseWindowQuota(env.HOLDFAST_TEST_EVENT_QUOTA, 'HOLDFAST_TEST_EVENT_QUOTA', {
        limit: 10,
        windowMs: 60_000,
      }),
      recover: parseWindowQuota(env.HOLDFAST_RECOVER_QUOTA, 'HOLDFAST_RECOVER_QUOTA', {
        limit: 5,
        windowMs: 3_600_000,
      }),
      recoverMax: positiveInteger(env.HOLDFAST_RECOVER_MAX, 'HOLDFAST_RECOVER_MAX', 1000),
    },
  };
}
