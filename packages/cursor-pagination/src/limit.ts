/** The page size when none (or zero, or something non-numeric) is asked for. */
export const DEFAULT_LIMIT = 20;

/** The largest page; larger requests are clamped, not rejected. */
export const MAX_LIMIT = 100;

// A plain decimal number: no exponent, hex, `Infinity`, whitespace or empty string.
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

/**
 * The page size for a raw `limit`, by one rule: missing, non-numeric or
 * zero gives 20; a value below 1 becomes 1; a value above 100 becomes 100. Never throws: an
 * over-large or odd limit is clamped, not rejected. A fractional value is truncated after the
 * clamp (`2.9` gives 2, `0.5` gives 1).
 *
 * @example
 * ```ts
 * clampLimit(undefined); // 20
 * clampLimit('abc'); // 20
 * clampLimit('0'); // 20
 * clampLimit('-5'); // 1
 * clampLimit('500'); // 100
 * clampLimit('42'); // 42
 * ```
 */
export function clampLimit(raw: string | number | null | undefined): number {
  let value: number;
  if (typeof raw === 'number') {
    value = raw;
  } else if (typeof raw === 'string' && DECIMAL.test(raw)) {
    value = Number(raw);
  } else {
    return DEFAULT_LIMIT;
  }
  if (Number.isNaN(value) || value === 0) return DEFAULT_LIMIT;
  if (value < 1) return 1;
  if (value > MAX_LIMIT) return MAX_LIMIT;
  return Math.trunc(value);
}
