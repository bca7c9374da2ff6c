import { notFoundProblem, onProblem } from '@holdfast/problem-details/hono';
import { OpenAPIHono } from '@hono/zod-openapi';
import { MANAGEMENT_RESOURCES, type ManagementResource, managementRoutes } from './app';
import type { ManagementApp } from './app-types';
import { type Management, resolveOptions, type WebhookManagementOptions } from './options';

/** The paths and components the management API adds to an OpenAPI 3.1 document. */
export interface ManagementOpenApi {
  /** Keyed by the full path (`basePath` included), as a document's `paths`. */
  readonly paths: Record<string, unknown>;
  /** `components.schemas` the paths refer to (`#/components/schemas/...`). */
  readonly components: { readonly schemas: Record<string, unknown> };
}

/**
 * The management API as a Fetch handler: `Request` in, `Response` out, every error
 * `application/problem+json`. Mount it under its `basePath` in any server.
 */
export interface WebhookManagementApi {
  (request: Request): Promise<Response>;
  /** Where it is served, as clients see it (`''` for the root). */
  readonly basePath: string;
  /** Its paths and schemas, for the host's OpenAPI document. */
  openapi(): ManagementOpenApi;
}

// The resolved options of each handler, for the doors that mount its routes natively.
const resolved = new WeakMap<WebhookManagementApi, Management>();

/** The resolved options behind `api`, for the doors. */
export function managementOf(api: WebhookManagementApi): Management {
  const m = resolved.get(api);
  if (!m) throw new TypeError('not a handler built by webhookManagementApi()');
  return m;
}

/** The routes of `m` mounted at its base path on an app of their own. */
function mounted(
  m: Management,
  resources: readonly ManagementResource[] = MANAGEMENT_RESOURCES,
): ManagementApp {
  const app: ManagementApp = new OpenAPIHono();
  app.route(m.basePath === '' ? '/' : m.basePath, managementRoutes(m, resources));
  return app;
}

/**
 * The webhook management API: endpoints (create, list, get, update, delete, rotate-secret,
 * recover, test events, stats) and deliveries (list with filters, sorts and signed cursors,
 * get, attempts, replay) and notifications, for the caller `authorize` answers. Scopes follow
 * the data: a caller sees and changes only what the event types it may read allow; test and
 * live are disjoint accounts; what it may not see is 404.
 *
 * @example
 * ```ts
 * const api = webhookManagementApi({ db, transaction, keyring, authorize, eventTypes, basePath: '/webhooks' });
 * const response = await api(new Request('http://localhost/webhooks/webhook-endpoints'));
 * ```
 */
export function webhookManagementApi(options: WebhookManagementOptions): WebhookManagementApi {
  const m = resolveOptions(options);
  const app = mounted(m);
  app.notFound(async (c) => {
    const page = m.pages ? await m.pages(c.req.raw) : undefined;
    return page ?? notFoundProblem(app)(c);
  });
  app.onError(onProblem());
  let document: ManagementOpenApi | undefined;
  const api = Object.assign(async (request: Request) => app.fetch(request), {
    basePath: m.basePath,
    openapi: () => (document ??= openApiOf(mounted(m))),
  });
  resolved.set(api, m);
  return api;
}

function openApiOf(app: ManagementApp): ManagementOpenApi {
  const document = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: { title: 'Webhook management', version: '1' },
  });
  return JSON.parse(
    JSON.stringify({
      paths: document.paths ?? {},
      components: { schemas: document.components?.schemas ?? {} },
    }),
  ) as ManagementOpenApi;
}

/** The management routes of `api` as an OpenAPIHono sub-app, relative to where the host mounts them. */
export function routesOf(
  api: WebhookManagementApi,
  resources: readonly ManagementResource[] = MANAGEMENT_RESOURCES,
): ManagementApp {
  return managementRoutes(managementOf(api), resources);
}
