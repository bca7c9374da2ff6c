import { type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';

/**
 * The server's tracer. `@opentelemetry/api` alone records nothing: every span is a no-op until
 * the operator registers an SDK before the server starts, for instance
 * `npm install @opentelemetry/sdk-node @opentelemetry/exporter-trace-otlp-http` and
 * `node --import ./otel.mjs` with a file that starts a `NodeSDK` (see the server's README).
 *
 * @example
 * ```ts
 * await inSpan('idempotency claim', {}, async () => claim());
 * ```
 */
function tracer(): Tracer {
  return trace.getTracer('@holdfast/reference-server');
}

/** Runs `work` inside an active span named `name`, ending it (with an error status if it throws). */
export async function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Record<string, string | number | boolean> },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer().startActiveSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes ?? {} },
    async (span) => {
      try {
        return await work(span);
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/**
 * Records a span for something that already happened (a delivery attempt read from the attempt
 * log): it starts `durationMs` before `end` and ends at `end`.
 */
export function recordSpan(
  name: string,
  end: Date,
  durationMs: number,
  attributes: Record<string, string | number | boolean>,
  failed: boolean,
): void {
  const span = tracer().startSpan(name, {
    kind: SpanKind.CLIENT,
    startTime: new Date(end.getTime() - durationMs),
    attributes,
  });
  if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end(end);
}

export { SpanKind };
