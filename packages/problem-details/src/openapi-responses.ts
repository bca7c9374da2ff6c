import { z } from 'zod';

/**
 * The RFC 9457 body of every error as a zod v4 schema registered as the OpenAPI component
 * `Problem`, with the members `ProblemError.toJSON()` writes (`code`, `requestId`, `errors`).
 *
 * @example
 * ```ts
 * createRoute({ ..., responses: { 404: { description: 'not_found', content: { 'application/problem+json': { schema: problemSchema } } } } });
 * ```
 */
export const problemSchema: z.ZodObject<{
  type: z.ZodString;
  title: z.ZodString;
  status: z.ZodNumber;
  detail: z.ZodString;
  instance: z.ZodString;
  requestId: z.ZodString;
  code: z.ZodString;
  errors: z.ZodOptional<
    z.ZodArray<
      z.ZodObject<{
        field: z.ZodString;
        code: z.ZodString;
        pointer: z.ZodOptional<z.ZodString>;
        detail: z.ZodOptional<z.ZodString>;
      }>
    >
  >;
}> = z
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

/** A problem+json response of an OpenAPI operation. */
export interface ProblemResponse {
  description: string;
  content: { 'application/problem+json': { schema: typeof problemSchema } };
}

/** What a status means, naming the shared codes each can carry (see `holdfastDefinitions`). */
export const defaultProblemDescriptions: Readonly<Record<number, string>> = {
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

/** Options of {@link problemResponsesFor}. */
export interface ProblemResponsesOptions {
  /** The description of each status. Default {@link defaultProblemDescriptions}. */
  readonly descriptions?: Readonly<Record<number, string>>;
  /** Statuses every operation can answer (a rate limit, a crash, an outage). Default none. */
  readonly always?: readonly number[];
}

/**
 * Makes the function routes call to declare their problem+json responses by status, each with
 * its description (`overrides` replace one, to name a route's own codes) and the
 * {@link problemSchema}, plus the statuses every operation can answer.
 *
 * @example
 * ```ts
 * const problemResponses = problemResponsesFor({ always: [429, 500, 503] });
 * createRoute({ ..., responses: { 200: ok, ...problemResponses([400, 404], { 404: 'not_found: no such order.' }) } });
 * ```
 */
export function problemResponsesFor(
  options: ProblemResponsesOptions = {},
): (
  statuses: readonly number[],
  overrides?: Readonly<Record<number, string>>,
) => Record<number, ProblemResponse> {
  const { descriptions = defaultProblemDescriptions, always = [] } = options;
  return (statuses, overrides = {}) => {
    const responses: Record<number, ProblemResponse> = {};
    for (const status of [...statuses, ...always]) {
      responses[status] = {
        description: overrides[status] ?? descriptions[status] ?? 'Error.',
        content: { 'application/problem+json': { schema: problemSchema } },
      };
    }
    return responses;
  };
}
