import type { Principal } from '@holdfast/api-keys';
import { type WebhookManagementApi, webhookManagementApi } from '@holdfast/webhook-portal';
import { webhookManagementRoutes } from '@holdfast/webhook-portal/hono';
import type { MiddlewareHandler } from 'hono';
import type { App, AppEnv, Deps } from './context';
import { exampleObject } from './event-examples';
import { EVENT_TYPE_SCOPES, type EventType } from './event-types';

// Webhook endpoints, deliveries and notifications under /v1 are @holdfast/webhook-portal's management API,
// mounted natively on the /v1 router: behind the API key, the rate limit, the scope check and
// the body guard, documented in /openapi.json in their places.

/** The key `apiKeyAuth()` accepted, by request: what the management API's `authorize` answers. */
const principals = new WeakMap<Request, Principal>();

/**
 * Remembers the request's principal for the management API's `authorize`; after `apiKeyAuth()`.
 *
 * @example
 * ```ts
 * v1.use(apiKeyAuth({ ... }), rememberPrincipal());
 * ```
 */
export function rememberPrincipal(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    principals.set(c.req.raw, c.get('principal'));
    await next();
  };
}

const apis = new WeakMap<Deps, WebhookManagementApi>();

/** The management API over the server's database, settings and clock (one per `deps`). */
function managementApi(deps: Deps): WebhookManagementApi {
  let api = apis.get(deps);
  if (!api) {
    const { config } = deps;
    api = webhookManagementApi({
      db: deps.db,
      transaction: deps.transaction,
      keyring: deps.keyring,
      authorize: (request) => principals.get(request),
      eventTypes: EVENT_TYPE_SCOPES,
      basePath: '/v1',
      realm: 'holdfast',
      destinations: {
        allowPrivateDestinations: config.allowPrivateDestinations,
        ...(deps.privateUrlPrefixes ? { privateUrlPrefixes: deps.privateUrlPrefixes } : {}),
        production: config.production,
      },
      maxEndpoints: config.maxEndpoints,
      concurrencyMax: config.delivery.perEndpoint,
      testEvents: config.endpointQuotas.testEvents,
      recover: config.endpointQuotas.recover,
      recoverMax: config.endpointQuotas.recoverMax,
      testEvent: (type, livemode) => exampleObject(type as EventType, livemode),
      now: deps.now,
      docs: {
        settings: {
          maxEndpoints: 'HOLDFAST_MAX_ENDPOINTS',
          testEvents: 'HOLDFAST_TEST_EVENT_QUOTA',
          recover: 'HOLDFAST_RECOVER_QUOTA',
          recoverMax: 'HOLDFAST_RECOVER_MAX',
        },
        eventsPath: '/v1/events',
      },
    });
    apis.set(deps, api);
  }
  return api;
}

/**
 * `/v1/webhook-endpoints`: registration, changes, deletion, secret rotation, test events,
 * recovery and health, from the management API.
 *
 * @example
 * ```ts
 * webhookEndpointRoutes(v1, deps);
 * ```
 */
export function webhookEndpointRoutes(v1: App, deps: Deps): void {
  v1.route('/', webhookManagementRoutes(managementApi(deps), { resources: ['webhook-endpoints'] }));
}

/**
 * `/v1/deliveries`: the list (the dead-letter view is `status=dead`), the attempt log and
 * replay, from the management API.
 *
 * @example
 * ```ts
 * deliveryRoutes(v1, deps);
 * ```
 */
export function deliveryRoutes(v1: App, deps: Deps): void {
  v1.route('/', webhookManagementRoutes(managementApi(deps), { resources: ['deliveries'] }));
}

/**
 * `/v1/notifications`: what the sender told the account, from the management API.
 *
 * @example
 * ```ts
 * notificationRoutes(v1, deps);
 * ```
 */
export function notificationRoutes(v1: App, deps: Deps): void {
  v1.route('/', webhookManagementRoutes(managementApi(deps), { resources: ['notifications'] }));
}
