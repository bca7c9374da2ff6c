import type { Context } from 'hono';
import { type ListQuery, type ListQueryOptions, parseListQuery } from './list-query';

/**
 * The list query of a Hono request (`sort`, `limit`, `cursor`, `include`), checked by
 * `parseListQuery`: what it throws (400 `invalid_sort`, `invalid_cursor`, ...) is rendered by
 * `onProblem()` of `@holdfast/problem-details/hono`.
 *
 * @example
 * ```ts
 * app.get('/v1/orders', async (c) => {
 *   const query = await listQuery(c, { allowlist: orderSort, keyring, binding: { account } });
 *   return c.json(await paginate(db, { from: 'orders', allowlist: orderSort, binding: { account }, keyring, ...query.params }));
 * });
 * ```
 */
export function listQuery<K extends string>(c: Context, options: ListQueryOptions<K>): Promise<ListQuery<K>> {
  return parseListQuery(new URL(c.req.url), options);
}
