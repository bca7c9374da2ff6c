// Bounds on what a problem may carry: a hostile request
// must not turn into a large answer, or into work proportional to its size, however many fields
// it gets wrong or however long a name it sends.

/** The most entries a problem's `errors` holds; `detail` says how many more there were. */
export const MAX_ERRORS = 20;

/** The longest echo of client input (a field name, an unknown key, a path) in a problem, in UTF-16 code units. */
export const MAX_ECHO_LENGTH = 100;

/** The longest `detail` of one `errors` entry; messages are ours, this only bounds a runaway one. */
export const MAX_ENTRY_DETAIL_LENGTH = 1000;

/** What a cut text ends with, so a reader knows it was cut. */
export const CUT_MARK = '…';

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;

/**
 * `text` cut to at most `max` UTF-16 code units, ending with "…" when it was cut; a surrogate pair
 * is never split, so the result stays well-formed if `text` was. Use it for every piece of client
 * input a problem echoes.
 *
 * @example
 * ```ts
 * clipEcho('x'.repeat(1_000_000)); // 99 x's and "…": 100 code units
 * clipEcho('colour'); // 'colour'
 * ```
 */
export function clipEcho(text: string, max: number = MAX_ECHO_LENGTH): string {
  if (text.length <= max) return text;
  if (max < 1) return '';
  let end = max - CUT_MARK.length;
  if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
  return text.slice(0, Math.max(end, 0)) + CUT_MARK;
}

/**
 * A JSON Pointer in URI-fragment form cut like {@link clipEcho}, never inside a `%XX` escape,
 * so what remains is still a valid prefix of the pointer, marked as cut.
 */
export function clipPointer(pointer: string, max: number = MAX_ECHO_LENGTH): string {
  if (pointer.length <= max) return pointer;
  let end = max - CUT_MARK.length;
  const percent = pointer.lastIndexOf('%', end - 1);
  if (percent !== -1 && percent > end - 3) end = percent;
  return pointer.slice(0, Math.max(end, 0)) + CUT_MARK;
}

/** `count` with thousands separators: "99,980". */
export function formatCount(count: number): string {
  return String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * One token of a JSON Pointer in URI-fragment form (RFC 6901 section 6): `~` as `~0`, `/` as
 * `~1`, the rest percent-encoded; a lone surrogate (which `encodeURIComponent` throws on) as
 * U+FFFD.
 *
 * @example
 * ```ts
 * pointerToken('a/b'); // 'a~1b'
 * ```
 */
export function pointerToken(segment: string): string {
  const escaped = segment.replace(LONE_SURROGATE, '\uFFFD').replaceAll('~', '~0').replaceAll('/', '~1');
  return encodeURIComponent(escaped).replaceAll('%7E', '~');
}
