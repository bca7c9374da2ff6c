import { fromZodError } from '@holdfast/problem-details';
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from './context';

// Built once: zod compiles an object schema's fast path on its first parse.
const NO_FIELDS = z.strictObject({});

/**
 * The request body of an action that takes no input (`cancel`, `rotate-secret`, `replay`): none,
 * or an empty JSON object. Declared as a plain JSON Schema, not zod, so that `@hono/zod-openapi`
 * adds no validator of its own (which would refuse an empty body sent with a JSON content type);
 * {@link refuseFields} holds the request to it.
 */
export const noFieldsBody = {
  required: false,
  description: 'Optional: nothing, or an empty JSON object. Any field is 400 unknown_field.',
  content: {
    'application/json': {
      schema: { type: 'object' as const, additionalProperties: false, maxProperties: 0 },
    },
  },
};

/**
 * Refuses a body with fields for an action that takes none (CONTRACT section 1, "Strictness"):
 * each field is 400 `unknown_field` naming it, rather than accepted and ignored; a body that is
 * not an object is 400 `validation_failed`. No body, or `{}`, passes.
 *
 * @example
 * ```ts
 * app.openapi(cancelOrder, async (c) => { refuseFields(c); ... });
 * ```
 */
export function refuseFields(c: Context<AppEnv>): void {
  const body: unknown = c.get('jsonBody');
  if (body === undefined) return;
  const result = NO_FIELDS.safeParse(body);
  if (!result.success) throw fromZodError(result.error, { location: 'body' });
}
