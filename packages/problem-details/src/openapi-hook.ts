import { problem } from './catalogue';
import type { ProblemError } from './problem-error';
import { fromZodError, type ZodLikeError } from './zod';

/** Where each validation target of `@hono/zod-openapi` is, in `fromZodError`'s terms; else the body. */
const LOCATIONS = new Map<string, 'query' | 'path' | 'header'>([
  ['query', 'query'],
  ['param', 'path'],
  ['header', 'header'],
]);

/** What {@link validationHook} reads of a Hono context. */
export interface HookContext {
  req: { method: string; queries?(): Record<string, string[]> };
}

/** The result `@hono/zod-openapi` gives a `defaultHook`. */
export interface HookResult {
  success: boolean;
  error?: unknown;
  target?: string;
}

/** Options of {@link validationHook}. */
export interface ValidationHookOptions<C extends HookContext> {
  /**
   * Called when a JSON body failed validation: a problem to answer instead (such as "this
   * request needs a body" when none came), or `undefined` to list the body's issues.
   */
  readonly body?: (c: C) => ProblemError | undefined;
}

/**
 * A `defaultHook` for `@hono/zod-openapi`: a failed validation becomes 400 `unknown_field`
 * (each unknown field named) or `validation_failed` with `errors[]` located in the path, query,
 * header or body. A query parameter given twice (`?limit=1&limit=2`) is named as `repeated`
 * rather than as "expected string, received array".
 *
 * @example
 * ```ts
 * const app = new OpenAPIHono({ defaultHook: validationHook() });
 * ```
 */
export function validationHook<C extends HookContext>(
  options: ValidationHookOptions<C> = {},
): (result: HookResult, c?: C) => void {
  return (result, c) => {
    if (result.success) return;
    const instead = result.target === 'json' && c ? options.body?.(c) : undefined;
    if (instead) throw instead;
    if (!isZodLikeError(result.error)) throw problem('validation_failed');
    const location = LOCATIONS.get(result.target ?? '') ?? 'body';
    const error =
      location === 'query' && c?.req.queries ? namingRepeats(result.error, c.req.queries()) : result.error;
    throw fromZodError(error, { location });
  };
}

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
