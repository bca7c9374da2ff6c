import { problem } from '@holdfast/problem-details';

/** One entity tag: `opaque` keeps its double quotes, as an `ETag` value does. */
export interface EntityTag {
  readonly weak: boolean;
  readonly opaque: string;
}

/** An `If-Match` value: `*` (any current representation), or a list of entity tags. */
export type IfMatch = { readonly any: true } | { readonly any: false; readonly tags: readonly EntityTag[] };

const isOws = (ch: string | undefined) => ch === ' ' || ch === '\t';

/** etagc = %x21 / %x23-7E / obs-text (RFC 9110 section 8.8.3). */
function isEtagc(code: number): boolean {
  return code === 0x21 || (code >= 0x23 && code <= 0x7e) || (code >= 0x80 && code <= 0xff);
}

/**
 * Reads an `If-Match` field value by RFC 9110 section 13.1.1: `If-Match = "*" / #entity-tag`.
 * `*` stands only alone; the list may hold empty elements (section 5.6.1.2: `"a", , "b"`), and
 * an empty list is valid and names no tag. `undefined` when the grammar does not produce the
 * value (`"a", *`, an unquoted tag, two tags without a comma).
 *
 * @example
 * ```ts
 * parseIfMatch('"3", W/"4"'); // { any: false, tags: [{ weak: false, opaque: '"3"' }, { weak: true, opaque: '"4"' }] }
 * parseIfMatch('"3", *'); // undefined
 * ```
 */
export function parseIfMatch(value: string): IfMatch | undefined {
  let start = 0;
  let end = value.length;
  while (start < end && isOws(value[start])) start++;
  while (end > start && isOws(value[end - 1])) end--;
  if (end - start === 1 && value[start] === '*') return { any: true };
  const tags: EntityTag[] = [];
  let i = start;
  // Each round reads one list element (possibly empty), then its comma or the end.
  for (;;) {
    while (i < end && isOws(value[i])) i++;
    if (i < end && value[i] !== ',') {
      const weak = value.startsWith('W/', i);
      if (weak) i += 2;
      if (value[i] !== '"') return undefined;
      const open = i++;
      while (i < end && isEtagc(value.charCodeAt(i))) i++;
      if (i >= end || value[i] !== '"') return undefined;
      i++;
      tags.push({ weak, opaque: value.slice(open, i) });
      while (i < end && isOws(value[i])) i++;
    }
    if (i >= end) return { any: false, tags };
    if (value[i] !== ',') return undefined;
    i++;
  }
}

/**
 * Whether `ifMatch` holds for a resource whose current strong ETag is `current`: `*` always (the
 * resource exists), else a listed tag equal to it by strong comparison (section 8.8.3.2: neither
 * weak, same opaque-tag). A weak tag never matches.
 *
 * @example
 * ```ts
 * ifMatchHolds({ any: false, tags: [{ weak: false, opaque: '"3"' }] }, '"3"'); // true
 * ```
 */
export function ifMatchHolds(ifMatch: IfMatch, current: string): boolean {
  return ifMatch.any || ifMatch.tags.some((tag) => !tag.weak && tag.opaque === current);
}

/**
 * The `If-Match` header of a request, parsed; absent is `undefined`. A value outside the grammar
 * is 400 `validation_failed` naming the header, before any database work.
 *
 * @example
 * ```ts
 * const ifMatch = ifMatchHeader(c.req.header('if-match')); // throws 400 for `"a", *`
 * ```
 */
export function ifMatchHeader(value: string | undefined): IfMatch | undefined {
  if (value === undefined) return undefined;
  const parsed = parseIfMatch(value);
  if (parsed) return parsed;
  const detail =
    'If-Match must be `*` alone or a comma-separated list of entity tags such as "3" or W/"3" (RFC 9110 section 13.1.1).';
  throw problem('validation_failed', { detail, errors: [{ field: 'If-Match', code: 'invalid', detail }] });
}
