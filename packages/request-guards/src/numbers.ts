// A JSON number literal that is not zero but reads as 0 (`1e-400`, `0.` and 400 zeros and `1`):
// JSON.parse rounds it to the nearest double, which is 0, so what a service stores and compares
// would differ from what the client wrote, silently. (One that reads as Infinity, `1e400`, is
// left to the schema: a number schema refuses it, naming the field.)

// Only a text with a three-digit exponent or a run of 200 digits can hold such a literal: an
// exponent of at most 99 needs more than 200 leading zeros to pass the smallest double.
const SUSPECT = /[eE][+-]?0*[1-9]\d{2}|\d{200}/;
// Strings are matched whole, so digits inside them are never taken for numbers.
const TOKENS = /"(?:[^"\\]|\\.)*"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/**
 * The first number literal in the JSON text `source` that is not zero but reads as 0, or
 * `undefined` when there is none (the common case costs one regular-expression test).
 *
 * @example
 * ```ts
 * underflowingNumber('{"a":1e-400}'); // '1e-400'
 * underflowingNumber('{"a":0e-400,"b":"1e-400"}'); // undefined
 * ```
 */
export function underflowingNumber(source: string): string | undefined {
  if (!SUSPECT.test(source)) return undefined;
  for (const [token] of source.matchAll(TOKENS)) {
    if (token.startsWith('"')) continue;
    const mantissa = token.split(/[eE]/, 1)[0] ?? '';
    if (Number(token) === 0 && /[1-9]/.test(mantissa)) return token;
  }
  return undefined;
}
