// One text rule for every JSON value a client sends: U+0000 anywhere, in a
// key or a value, is refused, naming the field; a lone UTF-16 surrogate (only a `\uD800`-style
// escape can make one: UTF-8 bytes cannot) becomes U+FFFD, as browsers do; a `__proto__` key is
// refused, since `JSON.parse` makes it an own property that most object code silently drops.
// PostgreSQL's text and jsonb refuse U+0000 and lone surrogates, so without this rule such input
// turns into a 500 in one column type and into U+FFFD in another.

/** Where a JSON value breaks the text rule, and why. */
export interface TextIssue {
  /** JSON Pointer (RFC 6901) to the offending key or string, e.g. `#/metadata/a`. */
  readonly pointer: string;
  /** The same place as a dotted path, e.g. `metadata.a`. */
  readonly field: string;
  /** `nul`: U+0000 in a key or value; `proto`: a `__proto__` key. */
  readonly reason: 'nul' | 'proto';
}

/** The result of {@link wellFormedJson}: the value to use, or the first place breaking the rule. */
export type WellFormedResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly issue: TextIssue };

// What the JSON text must contain for the rule to matter: the `\u0000` escape, a surrogate
// escape (`\uD800` to `\uDFFF`, valid pairs included: the walk decides) or a `__proto__` key.
const SUSPECT = /\\u0000|\\u[dD][89a-fA-F]|__proto__/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** `text` with each lone surrogate replaced by U+FFFD (String.prototype.toWellFormed, ES2024). */
export function toWellFormedText(text: string): string {
  if (!LONE_SURROGATE.test(text)) return text;
  const native = (text as { toWellFormed?: () => string }).toWellFormed;
  if (native) return native.call(text);
  return text.replace(new RegExp(LONE_SURROGATE.source, 'g'), '\uFFFD');
}

const segment = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');

function issueAt(path: readonly string[], reason: TextIssue['reason']): WellFormedResult {
  return {
    ok: false,
    issue: { pointer: `#/${path.map(segment).join('/')}`, field: path.join('.'), reason },
  };
}

class Refused {
  constructor(readonly result: WellFormedResult) {}
}

function walk(value: unknown, path: string[]): unknown {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) throw new Refused(issueAt(path, 'nul'));
    return toWellFormedText(value);
  }
  if (Array.isArray(value)) {
    return value.map((item, i) => walk(item, [...path, String(i)]));
  }
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const keyPath = [...path, key];
      if (key.includes('\u0000')) throw new Refused(issueAt(keyPath, 'nul'));
      if (key === '__proto__') throw new Refused(issueAt(keyPath, 'proto'));
      out[toWellFormedText(key)] = walk((value as Record<string, unknown>)[key], keyPath);
    }
    return out;
  }
  return value;
}

/**
 * Applies the text rule to `value`, parsed from the JSON text `source`. When `source` holds no
 * `\u0000`, no surrogate escape and no `__proto__`, the value is returned as it is after one
 * native scan of the text; otherwise it is walked and rebuilt.
 *
 * @example
 * ```ts
 * const source = '{"a":"\\ud800"}';
 * const result = wellFormedJson(JSON.parse(source), source);
 * // result: { ok: true, value: { a: '\uFFFD' } }
 * ```
 */
export function wellFormedJson(value: unknown, source: string): WellFormedResult {
  if (!SUSPECT.test(source)) return { ok: true, value };
  try {
    return { ok: true, value: walk(value, []) };
  } catch (error) {
    if (error instanceof Refused) return error.result;
    throw error;
  }
}
