import { z } from 'zod';
import type { SortAllowlist } from './allowlist';
import { sortDescription, sortSchema } from './openapi';

/**
 * A zod v4 schema for the `sort` query parameter carrying its OpenAPI description, pattern,
 * default and aliases as metadata, so `@hono/zod-openapi` declares the sortable fields
 * (sorting rule 11). It accepts any string on purpose: `parseSort` validates, so clients get
 * `invalid_sort` / `too_many_sort_keys` rather than a generic validation error.
 *
 * @example
 * ```ts
 * import { createRoute, z } from '@hono/zod-openapi';
 * import { sortQuerySchema } from '@holdfast/sort-allowlist/zod';
 *
 * const listOrders = createRoute({
 *   method: 'get',
 *   path: '/v1/orders',
 *   request: { query: z.object({ sort: sortQuerySchema(orderSort) }) },
 *   responses: { 200: { description: 'A page of orders' } },
 * });
 * ```
 */
export function sortQuerySchema(allowlist: SortAllowlist): z.ZodOptional<z.ZodString> {
  const { type: _type, ...schema } = sortSchema(allowlist);
  return z
    .string()
    .optional()
    .meta({ ...schema, description: sortDescription(allowlist), param: { name: 'sort', in: 'query' } });
}
