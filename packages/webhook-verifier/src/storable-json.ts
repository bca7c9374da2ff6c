/** Any surrogate code unit: with U+0000, the only reason a string needs the walk below. */
const SURROGATE = /[\uD800-\uDFFF]/;

/** A JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

function text(value: string): string {
  if (!SURROGATE.test(value) && !value.includes('\u0000')) return value;
  let out = '';
  // Iterating a string yields code points: a valid pair comes as one, a lone surrogate alone.
  for (const char of value) {
    const code = char.codePointAt(0) ?? 0;
    out += code === 0 || (code >= 0xd800 && code <= 0xdfff) ? '\uFFFD' : char;
  }
  return out;
}

/**
 * The view of a parsed payload that PostgreSQL's `jsonb` can hold: U+0000 and lone surrogates
 * (valid JSON, https://www.rfc-editor.org/rfc/rfc8259#section-7, but refused by jsonb) become
 * U+FFFD in keys and strings. The exact signed bytes are kept beside it, so nothing of an odd
 * but genuine event is lost. Keys such as `__proto__` stay plain own keys.
 *
 * @example
 * ```ts
 * storableJson({ note: 'a\u0000b' }); // { note: 'a\uFFFDb' }
 * ```
 */
export function storableJson(value: unknown): JsonValue {
  if (typeof value === 'string') return text(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
  if (Array.isArray(value)) return value.map(storableJson);
  if (typeof value === 'object') {
    const out: { [key: string]: JsonValue } = {};
    for (const [key, item] of Object.entries(value)) {
      Object.defineProperty(out, text(key), {
        value: storableJson(item),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return null;
}
