import { isProblemError } from '@holdfast/problem-details';
import type { Span } from '@opentelemetry/api';
import type { Context, MiddlewareHandler, Next } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { AppEnv } from '../context';
import type { Logger } from './logger';
import type { Metrics } from './metrics';
import { inSpan, NOT_RECORDING, SpanKind, tracing } from './tracing';

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

type Labels = { readonly route: string; readonly method: string; readonly status: string };

/**
 * One label object per (route, method, status), built once: label sets are bounded (route
 * templates, methods, statuses), so the cache is too, and a request allocates none.
 */
function labelCache(): (route: string, method: string, status: number) => Labels {
  const cache = new Map<string, Labels>();
  return (route, method, status) => {
    const key = `${method} ${status} ${route}`;
    let labels = cache.get(key);
    if (labels === undefined) {
      labels = { route, method, status: String(status) };
      cache.set(key, labels);
    }
    return labels;
  };
}

/** The fields of a request's log line; `account` only once authentication named one. */
interface RequestRecord {
  requestId: string | undefined;
  method: string;
  route: string;
  status: number;
  latencyMs: number;
  account?: string;
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
  const labelsOf = labelCache();
  const observe = async (c: Context<AppEnv>, next: Next, span: Span): Promise<void> => {
    const method = c.req.method;
    const started = performance.now();
    const keyed = method === 'POST' && c.req.header('idempotency-key') !== undefined;
    if (keyed) await inSpan('idempotency', {}, async () => next());
    else await next();
    const seconds = (performance.now() - started) / 1000;
    const route = routeTemplate(c);
    const status = c.res.status;
    if (span.isRecording()) {
      span.updateName(`${method} ${route}`);
      span.setAttributes({ 'http.route': route, 'http.response.status_code': status });
    }
    if (metrics) {
      const labels = labelsOf(route, method, status);
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, seconds);
    }
    if (keyed) {
      const conflict = isProblemError(c.error) ? CONFLICTS[c.error.code] : undefined;
      const outcome = c.res.headers.get('idempotent-replayed') === 'true' ? 'replayed' : conflict;
      if (outcome) {
        metrics?.idempotency.inc({ outcome });
        span.setAttribute('idempotency.outcome', outcome);
      }
    }
    if (log?.isLevelEnabled('info')) {
      const record: RequestRecord = {
        requestId: c.get('requestId'),
        method,
        route,
        status,
        latencyMs: Math.round(seconds * 10_000) / 10,
      };
      const principal = c.get('principal') as { account: string } | undefined;
      if (principal) record.account = principal.account;
      log.info(record, 'request');
    }
  };
  return (c, next) => {
    if (!tracing()) return observe(c, next, NOT_RECORDING);
    const method = c.req.method;
    return inSpan(
      `${method} request`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } },
      (span) => observe(c, next, span),
    );
  };
}
