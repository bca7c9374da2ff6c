import { scopeFor } from '@holdfast/api-keys';
import { apiKeyAuth, requireScope } from '@holdfast/api-keys/hono';
import { postgresApiKeyStore } from '@holdfast/api-keys/postgres';
import { problem } from '@holdfast/problem-details';
import { notFoundProblem, onProblem, problemResponse } from '@holdfast/problem-details/hono';
import { strictQueries } from '@holdfast/problem-details/openapi';
import { missingBody } from '@holdfast/request-guards';
import { jsonBody, refuseNul, requestId } from '@holdfast/request-guards/hono';
import { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { validationHook } from './api/problem-responses';
import type { App, AppEnv, Deps } from './context';
import { dashboardRoutes } from './dashboard/index';
import { destinationHint } from './destination-hint';
import { renderDocs } from './docs';
import { observeRequests } from './observability/http-observer';
import { finalizeDocument } from './openapi';
import { contractProblemPages } from './problem-pages';
import { addressLimiter, perAddress, rateLimit } from './rate-limit';
import { eventRoutes } from './resources/events/routes';
import { notificationRoutes } from './resources/notifications/routes';
import { orderRoutes } from './resources/orders/routes';
import { paymentMethodRoutes } from './resources/payment-methods/routes';
import { paymentRoutes } from './resources/payments/routes';
import { subscriptionRoutes } from './resources/subscriptions/routes';
import { deliveryRoutes } from './routes/deliveries';
import { endpointHealthRoutes } from './routes/endpoint-health';
import { hooksRoutes } from './routes/hooks';
import { inboundEventRoutes } from './routes/inbound-events';
import { webhookEndpointRoutes } from './routes/webhook-endpoints';

const UNAVAILABLE = new Set([
  'CONNECTION_ENDED',
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  '57P01',
  '57P03',
]);

/** Whether `error` says the database is unreachable (postgres.js and PostgreSQL codes): a 503, not a 500. */
function databaseUnavailable(error: unknown): boolean {
  return (
    error instanceof Error && 'code' in error && typeof error.code === 'string' && UNAVAILABLE.has(error.code)
  );
}

/** Methods whose requests carry a body that jsonBody() reads. */
const hasBody = (method: string) => method === 'POST' || method === 'PATCH' || method === 'PUT';

/** The scope family of each first path segment under /v1 (CONTRACT section 3). */
const SCOPE_OF_SEGMENT: Record<string, 'orders' | 'payments' | 'subscriptions' | 'webhooks'> = {
  orders: 'orders',
  payments: 'payments',
  'payment-methods': 'payments',
  subscriptions: 'subscriptions',
  'webhook-endpoints': 'webhooks',
  events: 'webhooks',
  deliveries: 'webhooks',
  notifications: 'webhooks',
  'inbound-events': 'webhooks',
};

/** Read scope for GET, write scope otherwise, by the resource family of the path. */
function scopeByPath(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const segment = c.req.path.split('/')[2] ?? '';
    const family = SCOPE_OF_SEGMENT[segment];
    // A path under /v1 that names no resource family is refused here, before any handler:
    // nothing under /v1 runs without a scope check (CONTRACT section 10).
    if (!family) throw problem('not_found', { detail: `No resource is at ${c.req.path}.` });
    return requireScope<AppEnv>(scopeFor(family, c.req.method), { realm: 'holdfast' })(c, next);
  };
}

/** What the app registers besides the shared dependencies: route modules that need more. */
export interface AppOptions {
  /** Route modules mounted on /v1 after authentication, rate limiting and scope checks. */
  readonly v1Routes?: ReadonlyArray<(v1: App, deps: Deps) => void>;
  /** Route modules mounted at the root (no API key), such as the webhook receiver. */
  readonly rootRoutes?: ReadonlyArray<(app: App, deps: Deps) => void>;
}

/**
 * Builds the reference server's Hono app from the packages: wiring only. Order matters:
 * request id first (every response carries `Request-Id`), problem handlers, then for /v1
 * authentication (401 before anything else), rate limit, scope (403), the JSON body guard
 * (413/415/invalid_json) and the routes, whose zod schemas validate and document.
 */
export function buildApp(deps: Deps, options: AppOptions = {}): App {
  const app: App = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.use(requestId());
  app.use(observeRequests(deps));
  app.use(async (c, next) => {
    c.header('X-Content-Type-Options', 'nosniff');
    await next();
    if (!c.res.headers.has('X-Content-Type-Options')) c.res.headers.set('X-Content-Type-Options', 'nosniff');
    // A 413 is answered before the body was read: close the connection, so the client cannot
    // reuse a socket that still carries the rest of its body (RFC 9110 section 15.5.14).
    if (c.res.status === 413) c.res.headers.set('Connection', 'close');
  });
  const onError = onProblem();
  app.onError((error, c) => {
    // Hono's JSON validator refuses an empty body with a bare 400; jsonBody() has already
    // answered every body that is present but not JSON, so this one had no body at all.
    if (
      error instanceof HTTPException &&
      error.status === 400 &&
      c.req.path.startsWith('/v1/') &&
      c.get('jsonBody') === undefined &&
      hasBody(c.req.method)
    ) {
      return problemResponse(c, missingBody());
    }
    if (databaseUnavailable(error)) {
      return problemResponse(
        c,
        problem('service_unavailable', {
          detail: 'The database cannot be reached right now. Retry after the Retry-After delay.',
          retryAfter: 5,
          cause: error,
        }),
      );
    }
    return onError(error, c);
  });
  app.notFound(notFoundProblem(app));

  app.get('/healthz', async (c) => {
    await deps.sql`select 1`;
    return c.json({ status: 'ok' });
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key: hf_live_<opaque> or hf_test_<opaque>.',
  });
  // Built once, on the first request that needs it (every route is registered by then), not per request.
  let built: ReturnType<typeof finalizeDocument> | undefined;
  const document = () =>
    (built ??= finalizeDocument(
      JSON.parse(
        JSON.stringify(
          app.getOpenAPI31Document({
            openapi: '3.1.0',
            info: {
              title: 'Holdfast reference API',
              version: '1.0.0',
              description:
                'The Holdfast contract over HTTP: orders, refunds, payments, payment methods, subscriptions, webhook endpoints, events, deliveries, notifications and inbound events. JSON in camelCase; errors are application/problem+json (RFC 9457); lists are cursor-paginated ({ data, pageInfo }); Request-Id on every response.',
              license: { name: 'MIT', url: 'https://opensource.org/license/mit' },
              contact: { name: 'Holdfast', url: 'https://holdfast.dev', email: 'api@holdfast.dev' },
            },
            servers: [
              {
                url: '/',
                description: 'This server (local development, staging or production)',
                'x-internal': false,
              },
            ],
            security: [{ bearerAuth: [] }],
          }),
        ),
      ),
    ));
  app.get('/openapi.json', (c) => c.json(document()));
  let docs: string | undefined;
  app.get('/docs', (c) => {
    docs ??= renderDocs(document());
    return c.html(docs);
  });
  app.route('/problems', contractProblemPages());
  app.get('/dashboard/', (c) => c.redirect('/dashboard', 308));
  app.route('/dashboard', dashboardRoutes());

  const v1: App = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  strictQueries(v1);
  // Failed authentication and bad webhook signatures spend their address's tokens (CONTRACT
  // section 10): one limiter for both, so a flood of either cannot reach the database.
  const failures = addressLimiter(deps);
  v1.use(
    apiKeyAuth({
      store: postgresApiKeyStore(deps.sql),
      realm: 'holdfast',
      failures: perAddress(failures),
      now: deps.now,
    }),
  );
  v1.use(rateLimit(deps));
  v1.use(scopeByPath());
  v1.use(jsonBody({ maxBytes: 1024 * 1024 }));
  v1.use(refuseNul());
  v1.use(destinationHint(deps.config.production));
  orderRoutes(v1, deps);
  paymentRoutes(v1, deps);
  paymentMethodRoutes(v1, deps);
  subscriptionRoutes(v1, deps);
  webhookEndpointRoutes(v1, deps);
  endpointHealthRoutes(v1, deps);
  eventRoutes(v1, deps);
  deliveryRoutes(v1, deps);
  notificationRoutes(v1, deps);
  inboundEventRoutes(v1, deps);
  for (const register of options.v1Routes ?? []) register(v1, deps);
  app.route('/v1', v1);
  // The receiver is outside /v1: no API key, and it reads the raw body itself. Bad signatures
  // spend their address's tokens; the per-receiver limit counts verified deliveries only.
  hooksRoutes(app, deps, failures);
  for (const register of options.rootRoutes ?? []) register(app, deps);
  return app;
}
