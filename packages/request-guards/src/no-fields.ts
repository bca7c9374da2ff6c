import { fromZodError, type ProblemError, problem } from '@holdfast/problem-details';

/**
 * The OpenAPI request body of an action that takes no input (`cancel`, `rotate-secret`,
 * `replay`): none, or an empty JSON object. A plain JSON Schema rather than a zod one, so that
 * `@hono/zod-openapi` adds no validator of its own (which would refuse an empty body sent with
 * a JSON content type); {@link noFieldsProblem} holds the request to it.
 *
 * @example
 * ```ts
 * createRoute({ method: 'post', path: '/orders/{id}/cancel', request: { body: noFieldsBody }, responses });
 * ```
 */
export const noFieldsBody: {
  required: false;
  description: string;
  content: {
    'application/json': { schema: { type: 'object'; additionalProperties: false; maxProperties: 0 } };
  };
} = {
  required: false,
  description: 'Optional: nothing, or an empty JSON object. Any field is 400 unknown_field.',
  content: {
    'application/json': {
      schema: { type: 'object', additionalProperties: false, maxProperties: 0 },
    },
  },
};

const kindOf = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/**
 * The problem for a body given to an action that takes none, or `undefined` when the body is
 * absent or `{}`: each field is 400 `unknown_field` naming it, rather than accepted and ignored;
 * a body that is not an object is 400 `validation_failed`.
 *
 * @example
 * ```ts
 * noFieldsProblem({ reason: 'x' })?.code; // 'unknown_field'
 * noFieldsProblem(undefined); // undefined
 * ```
 */
export function noFieldsProblem(body: unknown): ProblemError | undefined {
  if (body === undefined) return undefined;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    const message = `Invalid input: expected object, received ${kindOf(body)}`;
    return fromZodError({ issues: [{ code: 'invalid_type', path: [], message }] });
  }
  const keys = Object.keys(body);
  if (keys.length === 0) return undefined;
  return fromZodError({
    issues: [{ code: 'unrecognized_keys', path: [], keys, message: 'Unrecognized keys' }],
  });
}

/**
 * 400 `validation_failed` for a request that needs a JSON body and got none (an empty body, with
 * or without `Content-Type: application/json`): one clear answer wherever it is noticed.
 *
 * @example
 * ```ts
 * if (body === undefined) throw missingBody();
 * ```
 */
export function missingBody(): ProblemError {
  return problem('validation_failed', {
    detail: 'This request needs a JSON body: send a JSON object with Content-Type: application/json.',
  });
}
