/**
 * A PostgreSQL array literal (`{"a","b"}`) for a parameter cast in SQL (`${pgArray(ids)}::text[]`).
 * postgres.js's `sql.array()` serializes an array only once its connection has fetched the
 * array types: as the first query of a new client it sent `we_1` for `{we_1}` ("malformed
 * array literal"). A literal of quoted elements needs neither the types nor their fetch.
 */
export function pgArray(values: readonly (string | number)[]): string {
  return `{${values.map((value) => `"${String(value).replace(/[\\"]/g, '\\$&')}"`).join(',')}}`;
}
