/** A JSON value, as the OpenAPI document and the docs page walk it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A JSON object. */
export type JsonObject = { [key: string]: Json };

/**
 * Whether a JSON value is an object (not an array, not null).
 *
 * @example
 * ```ts
 * isObject({ a: 1 }); // true
 * isObject([1]); // false
 * ```
 */
export function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
