import { problem } from './catalogue';
import { isProblemError, type ProblemError } from './problem-error';

/**
 * Turns any thrown value into a problem. A `ProblemError` passes through unchanged; anything
 * else becomes a 500 `internal_error` whose body says nothing about the cause: no message,
 * stack, SQL, host name or library version (RFC 9457 section 5). The original value is
 * kept as `cause` for the server's own logs.
 *
 * @example
 * ```ts
 * app.onError((error, c) => fromUnknown(error).toResponse({ instance: c.req.path }));
 * ```
 */
export function fromUnknown(error: unknown): ProblemError {
  if (isProblemError(error)) return error;
  return problem('internal_error', {
    detail: 'An unexpected error occurred. Quote the request id when reporting it.',
    cause: error,
  });
}
