import {
  INVALID_SPAN_CONTEXT,
  ProxyTracerProvider,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';

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

// What the API's global provider delegates to while no SDK is registered.
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * Whether an SDK is registered. Without one every span is a no-op, so the request path builds
 * none (a tracer, a span, a context and two closures per request for nothing).
 */
export function tracing(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NOOP_PROVIDER;
}

/** The span `work` gets while {@link tracing} is off: it records nothing, as the API's would. */
export const NOT_RECORDING: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Runs `work` inside an active span named `name`, ending it (with an error status if it throws). */
export async function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Record<string, string | number | boolean> },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  if (!tracing()) return work(NOT_RECORDING);
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
