import { requestUrl } from '@holdfast/node-bridge';
import type { Request } from 'express';
import { type ListQuery, type ListQueryOptions, parseListQuery } from './list-query';

/**
 * The list query of an Express request (`sort`, `limit`, `cursor`, `include`), read from the URL
 * itself (not `req.query`, whose parser varies with the app's settings) and checked by
 * `parseListQuery`: what it throws (400 `invalid_sort`, `invalid_cursor`, ...) reaches
 * `onProblem()` of `@holdfast/problem-details/express` (Express 5 passes a rejected handler on).
 *
 * @example
 * ```ts
 * app.get('/v1/orders', async (req, res) => {
 *   const query = await listQuery(req, { allowlist: orderSort, keyring, binding: { account } });
 *   res.json(await paginate(db, { from: 'orders', allowlist: orderSort, binding: { account }, keyring, ...query.params }));
 * });
 * ```
 */
export function listQuery<K extends string>(
  req: Request,
  options: ListQueryOptions<K>,
): Promise<ListQuery<K>> {
  return parseListQuery(requestUrl(req), options);
}
