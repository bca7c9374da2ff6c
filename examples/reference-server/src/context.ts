import type { Principal } from '@holdfast/api-keys';
import type { Keyring } from '@holdfast/cursor-pagination';
import type { Db, Listener, Transaction } from '@holdfast/db';
import type { RedisScripting } from '@holdfast/rate-limit/redis';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Config } from './config';
import type { Logger } from './observability/logger';
import type { Metrics } from './observability/metrics';

/** Who is calling, from `apiKeyAuth()`: every query scopes by its `account` (the tenant). */
export type { Principal } from '@holdfast/api-keys';

/**
 * How long one list statement may run before PostgreSQL cancels it (answered 503 with
 * Retry-After, as every statement timeout is). Shorter than the API's statement timeout: every
 * accepted sort reads an index and answers in milliseconds (bench/pagination), so a list still
 * running after this long is one that would hold a connection other tenants need.
 */
export const LIST_STATEMENT_TIMEOUT_MS = 2_000;

/** Hono's environment for every route of the reference server. */
export interface AppEnv {
  Variables: {
    requestId: string;
    jsonBody: unknown;
    principal: Principal;
  };
}

/** The app type every route module registers on. */
export type App = OpenAPIHono<AppEnv>;

/**
 * The database as the server's code sees it, whichever driver is behind it: statements on any
 * connection of the pool, and transactions (`transaction(async (_tx, db) => ...)`).
 */
export interface Database {
  readonly db: Db;
  readonly transaction: Transaction<unknown>;
}

/** What route modules get: wiring only, no logic. */
export interface Deps extends Database {
  /** LISTEN/NOTIFY for the delivery workers' wake-ups; absent: they poll. */
  readonly listener?: Listener | undefined;
  /**
   * URL prefixes webhooks may go to at a private address (the demo's built-in receiver, outside
   * production); filled once the server knows its own URL, before the workers start.
   */
  readonly privateUrlPrefixes?: readonly string[] | undefined;
  readonly config: Config;
  /** The cursor-signing keyring of `@holdfast/cursor-pagination`. */
  readonly keyring: Keyring;
  /** Wall clock in ms, injectable for tests. */
  readonly now: () => number;
  /** Redis for rate limits shared across processes (`HOLDFAST_REDIS_URL`); absent: in process. */
  readonly redis?: RedisScripting | undefined;
  /** Structured logs (pino); absent in tests that build the app alone. */
  readonly log?: Logger | undefined;
  /** Prometheus metrics, when `HOLDFAST_METRICS_PORT` is set. */
  readonly metrics?: Metrics | undefined;
}
