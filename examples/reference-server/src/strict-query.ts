import { z } from '@hono/zod-openapi';
import type { App } from './context';

/**
 * Makes every route of `app` refuse unknown query parameters (CONTRACT section 1,
 * "Strictness"): a route that declares no query schema gets an empty strict one, so
 * `GET /v1/orders/ord_1?expand=x` is 400 `unknown_field` naming `expand`, as a list's unknown
 * parameter is. Routes that declare a query keep theirs (declare it with `z.strictObject`).
 */
export function strictQueries(app: App): void {
  const register = app.openapi.bind(app);
  const wrapped: typeof app.openapi = (route, handler, hook) =>
    register(
      route.request?.query ? route : { ...route, request: { ...route.request, query: z.strictObject({}) } },
      handler,
      hook,
    );
  app.openapi = wrapped;
}
