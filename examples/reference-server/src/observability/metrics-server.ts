import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

/**
 * Serves `GET /metrics` (Prometheus text exposition) on its own port, never on the public one
 * (CONTRACT section 10): bind it where only the scraper reaches. Anything else is 404.
 *
 * @example
 * ```ts
 * const server = await serveMetrics(metrics.registry, 9464, '127.0.0.1');
 * ```
 */
export async function serveMetrics(registry: Registry, port: number, host: string): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: GET /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (error: unknown) =>
        res
          .writeHead(503, { 'content-type': 'text/plain' })
          .end(`metrics unavailable: ${error instanceof Error ? error.message : 'error'}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
