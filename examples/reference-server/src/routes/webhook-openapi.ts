import { fromZodError, problem, type ZodLikeError } from '@holdfast/problem-details';
import { z } from '@hono/zod-openapi';
import { missingBody } from '../missing-body';

// Shared OpenAPI pieces of the webhook routes: the problem+json error responses every route
// declares and the validation hook that turns zod failures into the contract's 400s.

/** The RFC 9457 body of every error (CONTRACT section 2). */
export const ProblemSchema = z
  .object({
    type: z
      .string()
      .meta({ description: 'Absolute URI ending in the code, documented at /problems/{code}.' }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string().meta({ description: 'The request path.' }),
    requestId: z.string(),
    code: z.string().meta({ description: 'Stable machine-readable code; branch on this.' }),
    errors: z
      .array(
        z.object({
          field: z.string(),
          code: z.string(),
          pointer: z.string().optional(),
          detail: z.string().optional(),
        }),
      )
      .optional(),
  })
  .meta({ id: 'Problem' });

const descriptions: Record<number, string> = {
  400: 'Malformed request: validation_failed, unknown_field, invalid_json, invalid_sort, too_many_sort_keys or invalid_cursor.',
  401: 'unauthenticated: missing or invalid API key (WWW-Authenticate: Bearer).',
  403: 'forbidden: the key lacks the scope.',
  404: 'not_found: absent, or another account’s.',
  413: 'payload_too_large: body over 1 MiB.',
  415: 'unsupported_media_type: the body is not application/json.',
  422: 'Well-formed but refused.',
  429: 'rate_limited, with Retry-After and RateLimit headers.',
  500: 'internal_error.',
  503: 'service_unavailable: the database cannot be reached right now (Retry-After).',
};

type ProblemResponse = {
  description: string;
  content: { 'application/problem+json': { schema: typeof ProblemSchema } };
};

/**
 * The problem+json responses of a route, by status, with the contract's codes in each description.
 *
 * @example
 * ```ts
 * createRoute({ ..., responses: { 200: ok, ...problemResponses([400, 401, 403, 404]) } });
 * ```
 */
export function problemResponses(
  statuses: readonly number[],
  overrides: Readonly<Record<number, string>> = {},
): Record<number, ProblemResponse> {
  const responses: Record<number, ProblemResponse> = {};
  for (const status of [...statuses, 429, 500, 503]) {
    responses[status] = {
      description: overrides[status] ?? descriptions[status] ?? 'Error.',
      content: { 'application/problem+json': { schema: ProblemSchema } },
    };
  }
  return responses;
}

/**
 * The `defaultHook` of the webhook routers: a failed zod validation becomes 400
 * `unknown_field` (each unknown field named) or `validation_failed`, as problem+json.
 *
 * @example
 * ```ts
 * const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
 * ```
 */
export function validationHook(
  result: { success: boolean; error?: unknown; target?: string },
  c?: { get(key: 'jsonBody'): unknown; req: { method: string; queries?(): Record<string, string[]> } },
): void {
  if (result.success) return;
  // No body at all (Hono validates {} when there is no JSON Content-Type): say so, rather than
  // listing every required field as missing.
  if (result.target === 'json' && c && c.req.method !== 'GET' && c.get('jsonBody') === undefined) {
    throw missingBody();
  }
  if (!isZodLikeError(result.error)) throw problem('validation_failed');
  const location =
    result.target === 'query'
      ? 'query'
      : result.target === 'param'
        ? 'path'
        : result.target === 'header'
          ? 'header'
          : 'body';
  const error =
    location === 'query' && c?.req.queries ? namingRepeats(result.error, c.req.queries()) : result.error;
  throw fromZodError(error, { location });
}

/**
 * Every query parameter takes one value: a repeated one (`?limit=1&limit=2`) reaches zod as an
 * array. Its issue then says so in the client's terms rather than "expected string, received array".
 */
function namingRepeats(error: ZodLikeError, queries: Record<string, string[]>): ZodLikeError {
  return {
    issues: error.issues.map((issue) => {
      const name = issue.path.length === 1 ? String(issue.path[0]) : undefined;
      const count = name === undefined ? 0 : (queries[name]?.length ?? 0);
      if (issue.code !== 'invalid_type' || count < 2) return issue;
      return { ...issue, code: 'repeated', message: `given ${count} times; give it once` };
    }),
  };
}

function isZodLikeError(value: unknown): value is ZodLikeError {
  return typeof value === 'object' && value !== null && 'issues' in value && Array.isArray(value.issues);
}
