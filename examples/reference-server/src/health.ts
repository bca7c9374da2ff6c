import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readiness } from '@holdfast/db/migrate';
import { problem } from '@holdfast/problem-details';
import { notFoundProblem, onProblem } from '@holdfast/problem-details/hono';
import { problemResponsesFor } from '@holdfast/problem-details/openapi';
import { requestId } from '@holdfast/request-guards/hono';
import { getRequestListener } from '@hono/node-server';
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { json } from './api/fields';
import type { App, AppEnv } from './context';

// CONTRACT section 11, "Health": /livez is the process, /readyz the database (it answers and
// every migration this build expects is applied: `migrationReadiness` of @holdfast/db). No key,
// no rate limit: registered on the root app beside /healthz, and on HOLDFAST_HEALTH_PORT alone
// for a process that serves no API.

const Status = z
  .object({ status: z.literal('ok').meta({ description: 'Always `ok`.' }) })
  .meta({ id: 'HealthStatus' });

const tags = ['Health'];

const livez = createRoute({
  method: 'get',
  path: '/livez',
  tags,
  security: [],
  summary: 'Liveness',
  description:
    'Answers 200 while the process runs, whatever the database does: restart the process only when this fails. No API key, no rate limit.',
  responses: { 200: { description: 'The process runs.', content: json(Status) } },
});

const readyz = createRoute({
  method: 'get',
  path: '/readyz',
  tags,
  security: [],
  summary: 'Readiness',
  description:
    'Answers 200 when the database answers and every migration this build expects is applied; otherwise 503 with Retry-After: send no traffic until it is 200 again. No API key, no rate limit.',
  responses: {
    200: { description: 'Ready to serve.', content: json(Status) },
    ...problemResponsesFor()([503], {
      503: 'service_unavailable: the database does not answer, or migrations are not all applied (Retry-After).',
    }),
  },
});

/**
 * Registers `GET /livez` and `GET /readyz` on `app`, documented in its OpenAPI document.
 *
 * @example
 * ```ts
 * healthRoutes(app, migrationReadiness(db, ids));
 * ```
 */
export function healthRoutes(app: App, ready: Readiness): void {
  app.openapi(livez, (c) => c.json({ status: 'ok' as const }, 200));
  app.openapi(readyz, async (c) => {
    const why = await ready();
    if (why !== undefined)
      throw problem('service_unavailable', { detail: `Not ready: ${why}.`, retryAfter: 5 });
    return c.json({ status: 'ok' as const }, 200);
  });
}

/** A running health listener. */
export interface HealthServer {
  /** `http://host:port`. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves `/livez` and `/readyz` alone on `port` (`HOLDFAST_HEALTH_PORT`), for a worker-only
 * process, which has no API port to ask. Anything else is 404 problem+json.
 *
 * @example
 * ```ts
 * const health = await serveHealth(migrationReadiness(db, ids), 9465, '127.0.0.1');
 * await health.close();
 * ```
 */
export async function serveHealth(ready: Readiness, port: number, host: string): Promise<HealthServer> {
  const app: App = new OpenAPIHono<AppEnv>();
  app.use(requestId());
  app.onError(onProblem());
  app.notFound(notFoundProblem(app));
  healthRoutes(app, ready);
  const server = createServer(getRequestListener(app.fetch));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
