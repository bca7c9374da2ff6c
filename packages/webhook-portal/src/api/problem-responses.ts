import { validationHook as problemHook, problemResponsesFor } from '@holdfast/problem-details/openapi';
import { missingBody } from '@holdfast/request-guards';

/**
 * The problem+json responses of a route, by status, with the codes in each description, and
 * the 429, 500 and 503 every operation can answer.
 */
export const problemResponses: ReturnType<typeof problemResponsesFor> = problemResponsesFor({
  always: [429, 500, 503],
});

/**
 * The `defaultHook` of the routes: a failed zod validation becomes 400 `unknown_field` or
 * `validation_failed`; a JSON body that is absent altogether is "this request needs a JSON body"
 * rather than every required field listed as missing.
 */
interface HookContext {
  get(key: 'jsonBody'): unknown;
  req: { method: string; queries?(): Record<string, string[]> };
}

export const validationHook: ReturnType<typeof problemHook<HookContext>> = problemHook<HookContext>({
  body: (c) => (c.req.method !== 'GET' && c.get('jsonBody') === undefined ? missingBody() : undefined),
});
