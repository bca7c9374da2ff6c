/**
 * The sorts of a list with a `status` enum that have an index of their own: every other key
 * alone and `status` alone, in both directions, and `status` in either direction followed by
 * one other key in either direction (`status,-createdAt`, `-status,total`). Every other sort
 * the contract allows (up to three keys) starts with one of these whose last key is
 * fine-grained (a timestamp or an amount), so the same index reads it in order and only each
 * short run of equal values is sorted by the remaining keys. An index serves one exact order,
 * the id tiebreaker always last and descending, so one per combination of three keys would be
 * dozens of indexes a table.
 *
 * @example
 * ```ts
 * defineSortAllowlist({ fields, id: { column: 'id' }, indexed: statusSorts(['createdAt']) });
 * statusSorts(['createdAt']); // ['createdAt', '-createdAt', 'status', '-status', 'status,createdAt', ...]
 * ```
 */
export function statusSorts(others: readonly string[]): string[] {
  const both = (key: string) => [key, `-${key}`];
  const single = [...others, 'status'].flatMap(both);
  const pairs = both('status').flatMap((status) => others.flatMap(both).map((other) => `${status},${other}`));
  return [...single, ...pairs];
}
