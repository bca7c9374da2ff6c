import { isProblemError } from '@holdfast/problem-details';
import type { MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { AppEnv } from '../context';
import type { Logger } from './logger';
import type { Metrics } from './metrics';
import { inSpan, SpanKind } from './tracing';

/** Idempotency outcomes told apart by the answer: a replay, or one of the two conflicts. */
const CONFLICTS: Record<string, string> = {
  idempotency_key_reused: 'reused',
  idempotency_key_in_use: 'in_use',
};

/**
 * The route template that answered (`/v1/orders/:id`), or `unmatched` when no route did (404s,
 * requests refused by middleware before any route): never the path itself, so the metrics'
 * label sets stay bounded whatever clients send.
 */
function routeTemplate(c: Parameters<MiddlewareHandler>[0]): string {
  const routes = matchedRoutes(c);
  const handler = routes[c.req.routeIndex] ?? routes.at(-1);
  if (!handler || handler.method === 'ALL') return 'unmatched';
  return handler.path;
}

/**
 * Observes every request: a server span around its handling, the metrics of its route
 * template, method and status, idempotency replays and conflicts, and one log line with the
 * request id, route, status, latency and account (never keys, secrets or bodies).
 *
 * @example
 * ```ts
 * app.use(observeRequests({ log, metrics }));
 * ```
 */
export function observeRequests(options: {
  log?: Logger | undefined;
  metrics?: Metrics | undefined;
}): MiddlewareHandler<AppEnv> {
  const { log, metrics } = options;
  return (c, next) =>
    inSpan(
      `${c.req.method} request`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': c.req.method } },
      async (span) => {
        const started = performance.now();
        const keyed = c.req.method === 'POST' && c.req.header('idempotency-key') !== undefined;
        if (keyed) await inSpan('idempotency', {}, async () => next());
        else await next();
        const seconds = (performance.now() - started) / 1000;
        const route = routeTemplate(c);
        const status = c.res.status;
        span.updateName(`${c.req.method} ${route}`);
        span.setAttributes({ 'http.route': route, 'http.response.status_code': status });
        const labels = { route, method: c.req.method, status: String(status) };
        metrics?.httpRequests.inc(labels);
        metrics?.httpDuration.observe(labels, seconds);
        if (keyed) {
          const conflict = isProblemError(c.error) ? CONFLICTS[c.error.code] : undefined;
          const outcome = c.res.headers.get('idempotent-replayed') === 'true' ? 'replayed' : conflict;
          if (outcome) {
            metrics?.idempotency.inc({ outcome });
            span.setAttribute('idempotency.outcome', outcome);
          }
        }
        if (log?.isLevelEnabled('info')) {
          const principal = c.get('principal') as { account: string } | undefined;
          log.info(
            {
              requestId: c.get('requestId'),
              method: c.req.method,
              route,
              status,
              latencyMs: Math.round(seconds * 10_000) / 10,
              ...(principal ? { account: principal.account } : {}),
            },
            'request',
          );
        }
      },
    );
}
