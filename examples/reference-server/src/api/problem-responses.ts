import { validationHook as problemHook, problemResponsesFor } from '@holdfast/problem-details/openapi';
import { missingBody } from '@holdfast/request-guards';

/**
 * The problem+json responses of a route, by status, with the contract's codes in each
 * description, and the 429, 500 and 503 every /v1 operation can answer.
 *
 * @example
 * ```ts
 * createRoute({ ..., responses: { 200: ok, ...problemResponses([400, 401, 403, 404]) } });
 * ```
 */
export const problemResponses = problemResponsesFor({ always: [429, 500, 503] });

/**
 * The `defaultHook` of the routers: a failed zod validation becomes 400 `unknown_field` or
 * `validation_failed`; a JSON body that is absent altogether (Hono validates `{}` when there is
 * no JSON Content-Type) is "this request needs a JSON body" rather than every required field
 * listed as missing.
 *
 * @example
 * ```ts
 * const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
 * ```
 */
export const validationHook = problemHook<{
  get(key: 'jsonBody'): unknown;
  req: { method: string; queries?(): Record<string, string[]> };
}>({
  body: (c) => (c.req.method !== 'GET' && c.get('jsonBody') === undefined ? missingBody() : undefined),
});
