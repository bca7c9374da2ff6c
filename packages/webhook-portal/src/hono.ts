import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Env, Hono } from 'hono';
import { MANAGEMENT_RESOURCES, type ManagementResource } from './api/app';
import type { ManagementEnv } from './api/app-types';
import { routesOf, type WebhookManagementApi } from './api/handler';

export type { ManagementResource } from './api/app';
export type { ManagementEnv } from './api/app-types';
export type { WebhookManagementApi } from './api/handler';
export type { Authorize, PortalCaller } from './caller';

/**
 * Mounts the management API on a Hono app under its `basePath`: every method, every path below
 * it, answered by the Fetch handler.
 *
 * @example
 * ```ts
 * const app = new Hono();
 * mountWebhookManagement(app, webhookManagementApi({ ...options, basePath: '/webhooks' }));
 * ```
 */
export function mountWebhookManagement<E extends Env>(app: Hono<E>, api: WebhookManagementApi): void {
  const base = api.basePath;
  const handle = (c: { req: { raw: Request } }) => api(c.req.raw);
  if (base !== '') app.all(base, handle);
  app.all(`${base}/*`, handle);
}

/**
 * The management routes as an OpenAPIHono sub-app for a host built on `@hono/zod-openapi`:
 * `host.route(api.basePath, webhookManagementRoutes(api))` serves them natively, behind the
 * host's own middleware and error handler, and adds them to the host's OpenAPI document. The
 * routes still ask `authorize` who is calling. With `resources`, only those (a host that
 * documents its paths in its own order mounts each where it belongs).
 *
 * @example
 * ```ts
 * v1.route('/', webhookManagementRoutes(api, { resources: ['deliveries'] }));
 * ```
 */
export function webhookManagementRoutes(
  api: WebhookManagementApi,
  options: { readonly resources?: readonly ManagementResource[] } = {},
): OpenAPIHono<ManagementEnv> {
  return routesOf(api, options.resources ?? MANAGEMENT_RESOURCES);
}
