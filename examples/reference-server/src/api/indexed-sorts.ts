/**
 * The sorts a list with a `status` enum offers, each served by an index: every other key alone
 * and `status` alone, in both directions, and `status` in either direction followed by one other
 * key in either direction (`status,-createdAt`, `-status,total`). Longer orders (three keys, or
 * two keys not led by `status`) are refused with 400 invalid_sort: an index serves one exact
 * order, the id tiebreaker always last and descending, so covering every combination of three
 * keys would take dozens of indexes a table.
 *
 * @example
 * ```ts
 * statusSorts(['createdAt']); // ['createdAt', '-createdAt', 'status', '-status', 'status,createdAt', ...]
 * ```
 */
export function statusSorts(others: readonly string[]): string[] {
  const both = (key: string) => [key, `-${key}`];
  const single = [...others, 'status'].flatMap(both);
  const pairs = both('status').flatMap((status) => others.flatMap(both).map((other) => `${status},${other}`));
  return [...single, ...pairs];
}
