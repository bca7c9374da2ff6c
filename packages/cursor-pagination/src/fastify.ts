import type { FastifyRequest } from 'fastify';
import { type ListQuery, type ListQueryOptions, parseListQuery } from './list-query';

/**
 * The list query of a Fastify request (`sort`, `limit`, `cursor`, `include`), read from the URL
 * itself (not `request.query`, whose parser varies with the instance's settings) and checked by
 * `parseListQuery`: what it throws (400 `invalid_sort`, `invalid_cursor`, ...) reaches
 * `onProblem()` of `@holdfast/problem-details/fastify`.
 *
 * @example
 * ```ts
 * app.get('/v1/orders', async (request) => {
 *   const query = await listQuery(request, { allowlist: orderSort, keyring, binding: { account } });
 *   return paginate(db, { from: 'orders', allowlist: orderSort, binding: { account }, keyring, ...query.params });
 * });
 * ```
 */
export function listQuery<K extends string>(
  request: FastifyRequest,
  options: ListQueryOptions<K>,
): Promise<ListQuery<K>> {
  // Only the query matters: the host is a placeholder, never read.
  return parseListQuery(new URL(request.url, 'http://localhost'), options);
}
