import { type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Env } from 'hono';

/**
 * Makes every route of `app` refuse unknown query parameters: a route that declares no query
 * schema gets an empty strict one, so `GET /v1/orders/ord_1?expand=x` is 400 `unknown_field`
 * naming `expand` (with `validationHook()`), as a list's unknown parameter is. Routes that
 * declare a query keep theirs (declare it with `z.strictObject`). Call it before registering
 * routes.
 *
 * @example
 * ```ts
 * const app = new OpenAPIHono({ defaultHook: validationHook() });
 * strictQueries(app);
 * ```
 */
export function strictQueries<E extends Env>(app: OpenAPIHono<E>): void {
  const register = app.openapi.bind(app);
  const wrapped: typeof app.openapi = (route, handler, hook) =>
    register(
      route.request?.query ? route : { ...route, request: { ...route.request, query: z.strictObject({}) } },
      handler,
      hook,
    );
  app.openapi = wrapped;
}
