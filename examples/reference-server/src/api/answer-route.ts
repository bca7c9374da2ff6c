import { fromZodError } from '@holdfast/problem-details';
import { missingBody } from '@holdfast/request-guards';
import type { RouteConfig } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { App, AppEnv } from '../context';

/** What {@link answerRoute} hands its handler: the request, validated by the route's own schemas. */
export interface ValidatedRequest<Body, Params> {
  readonly body: Body;
  readonly params: Params;
}

// Built once: zod compiles an object schema's fast path on its first parse, so a schema made per
// request would be compiled per request.
const NO_QUERY = z.strictObject({});

function validate<S extends z.ZodType>(
  schema: S,
  value: unknown,
  location: 'body' | 'path' | 'query',
): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw fromZodError(result.error, { location });
  return result.data;
}

/**
 * Registers `route` for a handler whose answer is a ready `Response`, as the idempotent POSTs'
 * answers are (`withIdempotency` returns the stored or fresh response). zod-openapi types a
 * handler's return by the declared responses, which a `Response` built elsewhere cannot meet,
 * so the route is declared in the OpenAPI registry as it is, and its body, path parameters
 * and (empty, strict) query are validated here by the same zod schemas, with the same 400s.
 *
 * @example
 * ```ts
 * answerRoute(v1, createPayment, CreatePaymentSchema, z.object({}), (c, { body }) =>
 *   withIdempotency(c, { transaction, account, required: true }, (tx) => charge(tx, body)));
 * ```
 */
export function answerRoute<Body extends z.ZodType, Params extends z.ZodType>(
  app: App,
  route: RouteConfig,
  bodySchema: Body,
  paramsSchema: Params,
  handler: (
    c: Context<AppEnv>,
    request: ValidatedRequest<z.infer<Body>, z.infer<Params>>,
  ) => Promise<Response>,
): void {
  app.openAPIRegistry.registerPath(route);
  const path = route.path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
  app.on(route.method.toUpperCase(), path, async (c) => {
    validate(NO_QUERY, c.req.query(), 'query');
    const params = validate(paramsSchema, c.req.param(), 'path');
    const raw: unknown = c.get('jsonBody');
    if (raw === undefined) throw missingBody();
    const body = validate(bodySchema, raw, 'body');
    return handler(c, { body, params });
  });
}
