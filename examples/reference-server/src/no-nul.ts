import { problem } from '@holdfast/problem-details';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './context';

// PostgreSQL text and jsonb cannot hold U+0000 (SQLSTATE 22021 / 22P05), so a NUL character
// from a client would surface as a 500. Refused up front for every route: a path containing
// one names nothing (404); in a query parameter or a body string it is 400 validation_failed.

const NUL = '\u0000';
const MAX_NODES = 200_000;

function pointerSegment(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

const at = (path: string[]) => ({
  pointer: `#/${path.map(pointerSegment).join('/')}`,
  field: path.join('.'),
});

/** The JSON Pointer and dotted field of the first string (or key) holding NUL in `value`. */
function findNul(value: unknown): { pointer: string; field: string } | undefined {
  // JSON.stringify writes U+0000 as \u0000: one native scan clears almost every body; only
  // one that may hold NUL (or the six characters \u0000 themselves) is walked for the pointer.
  if (!JSON.stringify(value).includes('\\u0000')) return undefined;
  const stack: { value: unknown; path: string[] }[] = [{ value, path: [] }];
  for (let seen = 0; stack.length > 0 && seen < MAX_NODES; seen++) {
    const next = stack.pop();
    if (!next) break;
    if (typeof next.value === 'string') {
      if (next.value.includes(NUL)) return at(next.path);
    } else if (Array.isArray(next.value)) {
      next.value.forEach((item, i) => {
        stack.push({ value: item, path: [...next.path, String(i)] });
      });
    } else if (typeof next.value === 'object' && next.value !== null) {
      for (const [key, item] of Object.entries(next.value)) {
        if (key.includes(NUL)) return at([...next.path, key]);
        stack.push({ value: item, path: [...next.path, key] });
      }
    }
  }
  return undefined;
}

const refuse = (field: string, pointer: string | undefined, where: string) =>
  problem('validation_failed', {
    detail: `The ${where} contains a NUL character (U+0000), which is never valid here.`,
    errors: [
      {
        field,
        code: 'invalid_characters',
        ...(pointer === undefined ? {} : { pointer }),
        detail: 'Must not contain U+0000.',
      },
    ],
  });

/**
 * Refuses U+0000 in the path (404), query parameters and JSON body strings (400). Runs after
 * `jsonBody()`, whose parsed value it reads.
 *
 * @example
 * ```ts
 * v1.use(jsonBody({ maxBytes: 1024 * 1024 }));
 * v1.use(refuseNul());
 * ```
 */
export function refuseNul(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (/%00/i.test(c.req.path) || c.req.path.includes(NUL)) {
      throw problem('not_found', { detail: 'No resource has a NUL character in its path.' });
    }
    if (c.req.url.includes('?')) {
      for (const [name, values] of Object.entries(c.req.queries())) {
        if (name.includes(NUL) || values.some((v) => v.includes(NUL))) throw refuse(name, undefined, 'query');
      }
    }
    const body = c.get('jsonBody');
    const found = body === undefined ? undefined : findNul(body);
    if (found) throw refuse(found.field, found.pointer, 'request body');
    await next();
  };
}
