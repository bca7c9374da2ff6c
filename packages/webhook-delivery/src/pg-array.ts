/**
 * A PostgreSQL array literal (`{"a","b",NULL}`) for a parameter cast in SQL (`$1::text[]`).
 * postgres.js's `sql.array()` serializes an array only once its connection has fetched the
 * array types: as the first query of a new client it sent `we_1` for `{we_1}` ("malformed
 * array literal"). A literal of quoted elements needs neither the types nor their fetch, and
 * every driver sends it as the same text.
 */
export function pgArray(values: readonly (string | number | boolean | null)[]): string {
  const element = (value: string | number | boolean | null) =>
    value === null ? 'NULL' : `"${String(value).replace(/[\\"]/g, '\\$&')}"`;
  return `{${values.map(element).join(',')}}`;
}
