import { dbApiKeyStore, scopeFor } from '@holdfast/api-keys';
import { apiKeyAuth, requireScope } from '@holdfast/api-keys/hono';
import { databaseFailure } from '@holdfast/db';
import { migrationReadiness, type Readiness } from '@holdfast/db/migrate';
import { clipEcho, errorLine, problem } from '@holdfast/problem-details';
import {
  notFoundProblem,
  onProblem,
  problemResponse,
  problemTypeBase,
  servedOnce,
} from '@holdfast/problem-details/hono';
import { strictQueries } from '@holdfast/problem-details/openapi';
import { missingBody } from '@holdfast/request-guards';
import { jsonBody, refuseNul, requestId } from '@holdfast/request-guards/hono';
import { portalPages } from '@holdfast/webhook-portal';
import { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { validationHook } from './api/problem-responses';
import type { App, AppEnv, Deps } from './context';
import { destinationHint } from './destination-hint';
import { renderDocs } from './docs';
import { EVENT_TYPES } from './event-types';
import { favicon } from './favicon';
import { healthRoutes } from './health';
import { secureHtml } from './html';
import { observeRequests } from './observability/http-observer';
import { finalizeDocument } from './openapi';
import { contractProblemPages } from './problem-pages';
import { PROBLEM_TYPE_BASE } from './problems';
import { addressLimiter, perAddress, publicRateLimit, rateLimit } from './rate-limit';
import { eventRoutes } from './resources/events/routes';
import { orderRoutes } from './resources/orders/routes';
import { paymentMethodRoutes } from './resources/payment-methods/routes';
import { paymentRoutes } from './resources/payments/routes';
import { subscriptionRoutes } from './resources/subscriptions/routes';
import { hooksRoutes } from './routes/hooks';
import { inboundEventRoutes } from './routes/inbound-events';
import { sourceAddressRoutes } from './routes/webhook-source-addresses';
import { deliveryRoutes, notificationRoutes, rememberPrincipal, webhookEndpointRoutes } from './webhooks';

/** Methods whose requests carry a body that jsonBody() reads. */
const hasBody = (method: string) => method === 'POST' || method === 'PATCH' || method === 'PUT';

/** A scope family of CONTRACT section 3: `<family>:read` for GET and HEAD, `<family>:write` otherwise. */
export type ScopeFamily = 'orders' | 'payments' | 'subscriptions' | 'webhooks';

/** One resource under /v1: where its routes live, which scope guards them, who registers them. */
export interface V1Resource {
  /** The first path segment of every route it registers (`/v1/<segment>/...`). */
  readonly segment: string;
  readonly scope: ScopeFamily;
  /** The modules that register its routes on the /v1 sub-app, in this order. */
  readonly routes: ReadonlyArray<(v1: App, deps: Deps) => void>;
}

/**
 * Every resource under /v1, in the order its routes are registered. Adding a resource is one
 * entry here: the scope check (`scopeByPath`) knows exactly these segments, so a path under any
 * other answers 404 before a handler runs (CONTRACT section 10), and `buildApp` refuses to start
 * when a module registers a route outside its own segment (it would be unreachable).
 *
 * @example
 * ```ts
 * { segment: 'invoices', scope: 'payments', routes: [invoiceRoutes] }, // GET /v1/invoices needs payments:read
 * ```
 */
export const V1_RESOURCES: readonly V1Resource[] = [
  { segment: 'orders', scope: 'orders', routes: [orderRoutes] },
  { segment: 'payments', scope: 'payments', routes: [paymentRoutes] },
  { segment: 'payment-methods', scope: 'payments', routes: [paymentMethodRoutes] },
  { segment: 'subscriptions', scope: 'subscriptions', routes: [subscriptionRoutes] },
  { segment: 'webhook-endpoints', scope: 'webhooks', routes: [webhookEndpointRoutes] },
  { segment: 'events', scope: 'webhooks', routes: [eventRoutes] },
  { segment: 'deliveries', scope: 'webhooks', routes: [deliveryRoutes] },
  { segment: 'notifications', scope: 'webhooks', routes: [notificationRoutes] },
  { segment: 'inbound-events', scope: 'webhooks', routes: [inboundEventRoutes] },
];

/** Read scope for GET, write scope otherwise, by the resource of the path's first segment. */
function scopeByPath(resources: readonly V1Resource[]): MiddlewareHandler<AppEnv> {
  // The check of each segment for reads and for writes, made once rather than per request.
  const checks = new Map(
    resources.map((resource) => [
      resource.segment,
      {
        read: requireScope<AppEnv>(scopeFor(resource.scope, 'GET'), { realm: 'holdfast' }),
        write: requireScope<AppEnv>(scopeFor(resource.scope, 'POST'), { realm: 'holdfast' }),
      },
    ]),
  );
  return async (c, next) => {
    const path = c.req.path;
    // The segment after `/v1/`, up to the next slash.
    const end = path.indexOf('/', 4);
    const check = checks.get(end === -1 ? path.slice(4) : path.slice(4, end));
    // A path under /v1 that names no resource is refused here, before any handler:
    // nothing under /v1 runs without a scope check (CONTRACT section 10).
    if (!check) throw problem('not_found', { detail: `No resource is at ${clipEcho(path)}.` });
    const method = c.req.method;
    return (method === 'GET' || method === 'HEAD' ? check.read : check.write)(c, next);
  };
}

/**
 * Registers each resource's routes on the /v1 sub-app, and throws when a module registered a
 * route outside its resource's segment: `scopeByPath` would answer 404 there, on every request.
 *
 * @example
 * ```ts
 * registerResources(v1, deps, V1_RESOURCES);
 * ```
 */
export function registerResources<D>(
  v1: App,
  deps: D,
  resources: ReadonlyArray<{
    readonly segment: string;
    readonly routes: ReadonlyArray<(v1: App, deps: D) => void>;
  }>,
): void {
  for (const resource of resources) {
    const before = v1.routes.length;
    for (const register of resource.routes) register(v1, deps);
    for (const route of v1.routes.slice(before)) {
      if (route.path.split('/')[1] !== resource.segment) {
        throw new Error(
          `${route.method} /v1${route.path} is registered by the ${resource.segment} resource: add a V1_RESOURCES entry for its segment (src/app.ts)`,
        );
      }
    }
  }
}

/** What the app registers besides the shared dependencies: route modules that need more. */
export interface AppOptions {
  /** `/readyz`'s check (CONTRACT section 11); without it, the database answering `select 1`. */
  readonly ready?: Readiness;
  /** More resources on /v1, after {@link V1_RESOURCES}: authenticated, rate limited, scope checked. */
  readonly v1Resources?: readonly V1Resource[];
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
  app.use(problemTypeBase(PROBLEM_TYPE_BASE));
  app.use(observeRequests(deps));
  // The security headers in one layer (each layer is a few promises on every request).
  app.use(async (c, next) => {
    c.header('X-Content-Type-Options', 'nosniff');
    await next();
    const headers = c.res.headers;
    secureHtml(headers);
    if (!headers.has('X-Content-Type-Options')) headers.set('X-Content-Type-Options', 'nosniff');
    // A 413 is answered before the body was read: close the connection, so the client cannot
    // reuse a socket that still carries the rest of its body (RFC 9110 section 15.5.14).
    if (c.res.status === 413) headers.set('Connection', 'close');
  });
  // A crash is logged without its data: a database error's row detail and parameters would
  // carry body bytes (issue 28), so only what loggableError keeps is written.
  const onError = onProblem({
    log: (error, c) => {
      const requestId: string | undefined = c.get('requestId');
      if (deps.log?.isLevelEnabled('error')) {
        deps.log.error(
          { err: error, requestId, method: c.req.method, route: c.req.routePath },
          'request failed',
        );
      } else {
        console.error(`[${requestId ?? '-'}] ${c.req.method} ${c.req.routePath} failed: ${errorLine(error)}`);
      }
    },
  });
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
    const failure = databaseFailure(error);
    if (failure) {
      const timedOut = failure === 'timed_out';
      return problemResponse(
        c,
        problem('service_unavailable', {
          detail: timedOut
            ? 'The database did not answer in time. Retry after the Retry-After delay.'
            : 'The database cannot be reached right now. Retry after the Retry-After delay.',
          retryAfter: timedOut ? 2 : 5,
          cause: error,
        }),
      );
    }
    return onError(error, c);
  });
  app.notFound(notFoundProblem(app));

  // What anyone may call without a key costs CPU or a database round trip: limited per address
  // (issue 35). /livez and /readyz are not: a probe is never refused.
  const publicLimit = publicRateLimit(deps);
  for (const path of [
    '/healthz',
    '/openapi.json',
    '/docs',
    '/problems',
    '/problems/*',
    '/dashboard',
    '/dashboard/*',
    '/favicon.ico',
    '/',
  ]) {
    app.use(path, publicLimit);
  }
  app.get('/healthz', async (c) => {
    await deps.db.query('select 1');
    return c.json({ status: 'ok' });
  });
  healthRoutes(app, options.ready ?? migrationReadiness(deps.db, []));
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
  // Neither changes while the server runs: built and serialised once, then served with an ETag.
  app.get(
    '/openapi.json',
    servedOnce(() => JSON.stringify(document()), 'application/json'),
  );
  app.get(
    '/docs',
    servedOnce(() => renderDocs(document()), 'text/html; charset=UTF-8'),
  );
  app.route('/problems', contractProblemPages());
  app.get('/dashboard/', (c) => c.redirect('/dashboard', 308));
  // The portal's pages, signed in with an API key: the same /v1 any client calls, nothing private.
  const dashboard = portalPages({ basePath: '/dashboard', apiBase: '/v1', eventTypes: EVENT_TYPES });
  app.on(
    ['GET', 'HEAD'],
    ['/dashboard', '/dashboard/*'],
    async (c, next) => (await dashboard(c.req.raw)) ?? next(),
  );
  app.get('/favicon.ico', () => favicon());
  // A browser opening the server's root lands on the dashboard (the API reference is at /docs).
  app.get('/', (c) => c.redirect('/dashboard', 302));

  const v1: App = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  strictQueries(v1);
  // Failed authentication and bad webhook signatures spend their address's tokens (CONTRACT
  // section 10): one limiter for both, so a flood of either cannot reach the database.
  const failures = addressLimiter(deps);
  v1.use(
    apiKeyAuth({
      store: dbApiKeyStore(deps.db),
      realm: 'holdfast',
      failures: perAddress(failures),
      now: deps.now,
    }),
  );
  v1.use(rememberPrincipal());
  v1.use(rateLimit(deps));
  const resources = [...V1_RESOURCES, ...(options.v1Resources ?? [])];
  v1.use(scopeByPath(resources));
  v1.use(jsonBody({ maxBytes: 1024 * 1024 }));
  v1.use(refuseNul());
  v1.use(destinationHint(deps.config.production));
  registerResources(v1, deps, resources);
  app.route('/v1', v1);
  // The receiver is outside /v1: no API key, and it reads the raw body itself. Bad signatures
  // spend their address's tokens; the per-receiver limit counts verified deliveries only.
  hooksRoutes(app, deps, failures);
  sourceAddressRoutes(app, deps);
  for (const register of options.rootRoutes ?? []) register(app, deps);
  return app;
}
