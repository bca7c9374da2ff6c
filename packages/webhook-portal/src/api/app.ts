import { hasScope, insufficientScope } from '@holdfast/api-keys';
import { strictQueries } from '@holdfast/problem-details/openapi';
import { jsonBody, refuseNul } from '@holdfast/request-guards/hono';
import { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { ManagementApp, ManagementEnv } from './app-types';
import { deliveryRoutes } from './deliveries';
import { endpointRoutes } from './endpoints';
import { healthRoutes } from './health';
import { notificationRoutes } from './notifications';
import type { Management } from './options';
import { validationHook } from './problem-responses';
import { problem } from './problems';

/** The resources the management API serves, each the first segment of its paths. */
export type ManagementResource = 'webhook-endpoints' | 'deliveries' | 'notifications';

/** Every resource, in the order the OpenAPI document lists them. */
export const MANAGEMENT_RESOURCES: readonly ManagementResource[] = [
  'webhook-endpoints',
  'deliveries',
  'notifications',
];

const reads = (method: string) => method === 'GET' || method === 'HEAD';

/**
 * Who is calling, before anything else: 401 without a caller, 403 for a read-only caller's
 * write and for a caller without the API's own scope.
 */
function callerGuard(m: Management): MiddlewareHandler<ManagementEnv> {
  return async (c, next) => {
    const caller = await m.authorize(c.req.raw);
    if (!caller) {
      throw problem('unauthenticated', {
        detail: 'This request carries no credentials the service accepts.',
        headers: { 'WWW-Authenticate': `Bearer realm="${m.realm}"` },
      });
    }
    c.set('portalCaller', caller);
    if (!reads(c.req.method) && caller.readOnly) {
      throw problem('forbidden', { detail: 'This caller is read-only: it may look, not change anything.' });
    }
    if (m.scopes) {
      const scope = reads(c.req.method) ? m.scopes.read : m.scopes.write;
      if (!hasScope(caller, scope)) throw insufficientScope(scope, { realm: m.realm });
    }
    await next();
  };
}

/** Runs `middleware` unless the host already read the body (it mounts the routes behind its own guard). */
function unlessRead(middleware: MiddlewareHandler): MiddlewareHandler<ManagementEnv> {
  return (c, next) => ('jsonBody' in c.var ? next() : middleware(c, next));
}

/**
 * The management routes on an OpenAPIHono app of their own, with paths relative to where they
 * are mounted: each resource behind the caller guard and the JSON body guard, validated and
 * documented by the same schemas.
 */
export function managementRoutes(
  m: Management,
  resources: readonly ManagementResource[] = MANAGEMENT_RESOURCES,
): ManagementApp {
  const app: ManagementApp = new OpenAPIHono<ManagementEnv>({ defaultHook: validationHook });
  strictQueries(app);
  const body = unlessRead(jsonBody({ maxBytes: m.maxBodyBytes }));
  const nul = refuseNul();
  for (const resource of resources) {
    for (const path of [`/${resource}`, `/${resource}/*`]) {
      app.use(path, callerGuard(m));
      app.use(path, body);
      app.use(path, nul);
    }
  }
  if (resources.includes('webhook-endpoints')) {
    endpointRoutes(app, m);
    healthRoutes(app, m);
  }
  if (resources.includes('deliveries')) deliveryRoutes(app, m);
  if (resources.includes('notifications')) notificationRoutes(app, m);
  return app;
}
