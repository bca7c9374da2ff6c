import type { Keyring } from '@holdfast/cursor-pagination';
import type { Db, Transaction } from '@holdfast/db';
import type { DestinationOptions } from '@holdfast/webhook-delivery';
import type { Authorize } from '../caller';
import type { ManagementDocs } from './docs';
import { type EventTypeRules, type EventTypeScopes, eventTypeRules } from './event-types';
import type { WindowQuota } from './quota';
import { type EventTypeSchemas, webhookSchemas } from './schemas';

/** The bounds of the management API: every answer and every action a caller can repeat is bounded. */
export interface ManagementLimits {
  /** Webhook endpoints per account and mode (16): the next is 409 `endpoint_limit_reached`. */
  readonly maxEndpoints?: number;
  /** The ceiling of an endpoint's adaptive in-flight limit: the workers' per-endpoint concurrency. */
  readonly concurrencyMax?: number;
  /** Test events per endpoint and window (10 a minute): the next is 429. */
  readonly testEvents?: WindowQuota;
  /** Recoveries per endpoint and window (5 an hour): the next is 429. */
  readonly recover?: WindowQuota;
  /** Deliveries one recovery re-queues at most (1,000), the oldest first. */
  readonly recoverMax?: number;
  /** How long one list statement may run (2 s); the connection's own timeout when shorter. */
  readonly listTimeoutMs?: number;
  /** The largest JSON body read (1 MiB): 413 beyond. */
  readonly maxBodyBytes?: number;
}

/** What {@link webhookManagementApi} serves from. */
export interface WebhookManagementOptions extends ManagementLimits {
  /** The database `@holdfast/webhook-delivery` writes to. */
  readonly db: Db;
  /** Transactions on it; the scope checks lock the endpoint's row until the action is written. */
  readonly transaction: Transaction<unknown>;
  /** Who is calling: `undefined` answers 401. */
  readonly authorize: Authorize;
  /**
   * Every event type the service emits, with the scopes that may read it. An endpoint may carry
   * only these; a caller sees deliveries, attempts and stats of the types it may read, and
   * changes an endpoint only when it may read every type the endpoint carries.
   */
  readonly eventTypes: EventTypeScopes;
  /** Signs list cursors (`@holdfast/cursor-pagination`): a cursor is bound to its account and filters. */
  readonly keyring: Keyring;
  /**
   * The path the API is served under, as clients see it (`/v1`, `/webhooks`): routes match below
   * it and `Location` headers name it. Default: the root.
   */
  readonly basePath?: string;
  /** The scopes of the API itself: `read` for GET and HEAD, `write` otherwise; `false` checks none. */
  readonly scopes?: { readonly read: string; readonly write: string } | false;
  /** The realm named in `WWW-Authenticate` (401 and 403). */
  readonly realm?: string;
  /** The SSRF rules of destinations (`@holdfast/webhook-delivery`). */
  readonly destinations?: DestinationOptions;
  /** The `data.object` of a test event of `type`: by default `{ id: 'test_<type>', test: true }`. */
  readonly testEvent?: (type: string, livemode: boolean) => Record<string, unknown>;
  /** Wall clock in ms, injectable for tests. */
  readonly now?: () => number;
  /**
   * What answers a path the API does not serve, such as the portal's pages: `undefined` falls
   * through to a 404 problem.
   */
  readonly pages?: (request: Request) => Promise<Response | undefined>;
  /** How the OpenAPI descriptions name the host's settings and routes. */
  readonly docs?: ManagementDocs;
}

/** The options resolved: every limit set, the rules and schemas built. */
export interface Management {
  readonly db: Db;
  readonly transaction: Transaction<unknown>;
  readonly authorize: Authorize;
  readonly keyring: Keyring;
  readonly basePath: string;
  readonly scopes: { readonly read: string; readonly write: string } | false;
  readonly realm: string;
  readonly destinations: DestinationOptions;
  readonly testEvent: (type: string, livemode: boolean) => Record<string, unknown>;
  readonly now: () => number;
  readonly rules: EventTypeRules;
  readonly scopesOf: (type: string) => readonly string[];
  readonly docs: ManagementDocs;
  readonly schemas: EventTypeSchemas;
  readonly maxEndpoints: number;
  readonly concurrencyMax: number | undefined;
  readonly testEvents: WindowQuota;
  readonly recover: WindowQuota;
  readonly recoverMax: number;
  readonly listTimeoutMs: number;
  readonly maxBodyBytes: number;
  readonly pages: ((request: Request) => Promise<Response | undefined>) | undefined;
}

/** `/v1/` → `/v1`; `` and `/` → ``. */
function trimBase(path: string | undefined): string {
  const trimmed = (path ?? '').replace(/\/+$/, '');
  if (trimmed !== '' && !trimmed.startsWith('/')) throw new Error(`basePath must start with "/": ${path}`);
  return trimmed;
}

/** Resolves the options once, when the API is built: a bad limit fails the start, not a request. */
export function resolveOptions(options: WebhookManagementOptions): Management {
  const realm = options.realm ?? 'api';
  const positive = (value: number | undefined, name: string, fallback: number) => {
    const resolved = value ?? fallback;
    if (!Number.isInteger(resolved) || resolved < 1)
      throw new RangeError(`${name} must be a positive integer`);
    return resolved;
  };
  return {
    db: options.db,
    transaction: options.transaction,
    authorize: options.authorize,
    keyring: options.keyring,
    basePath: trimBase(options.basePath),
    scopes: options.scopes ?? { read: 'webhooks:read', write: 'webhooks:write' },
    realm,
    destinations: options.destinations ?? {},
    testEvent: options.testEvent ?? ((type, livemode) => ({ id: `test_${type}`, livemode })),
    now: options.now ?? Date.now,
    rules: eventTypeRules(options.eventTypes, { realm }),
    scopesOf: (type) => options.eventTypes[type] ?? ['*'],
    docs: options.docs ?? {},
    schemas: webhookSchemas(options.eventTypes),
    maxEndpoints: positive(options.maxEndpoints, 'maxEndpoints', 16),
    concurrencyMax: options.concurrencyMax,
    testEvents: options.testEvents ?? { limit: 10, windowMs: 60_000 },
    recover: options.recover ?? { limit: 5, windowMs: 3_600_000 },
    recoverMax: positive(options.recoverMax, 'recoverMax', 1000),
    listTimeoutMs: positive(options.listTimeoutMs, 'listTimeoutMs', 2000),
    maxBodyBytes: positive(options.maxBodyBytes, 'maxBodyBytes', 1024 * 1024),
    pages: options.pages,
  };
}
