import { z } from 'zod';
import type { SortAllowlist } from './allowlist';
import { sortDescription, sortSchema } from './openapi';

/**
 * A zod v4 schema for the `sort` query parameter carrying its OpenAPI declaration as metadata
 * (an array of the allowed `key` / `-key` values, `style: form, explode: false`, the default and
 * the aliases), so `@hono/zod-openapi` declares the sortable fields and a
 * generated client offers only those values. It accepts any string on purpose: `parseSort`
 * validates, so clients get `invalid_sort` / `too_many_sort_keys` rather than a generic
 * validation error.
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
  // The wire value is one comma-separated string, which zod sees; the document declares what it
  // means (the metadata's `type: 'array'` replaces zod's `string` in the generated schema).
  return z
    .string()
    .optional()
    .meta({
      ...sortSchema(allowlist),
      description: sortDescription(allowlist),
      param: { name: 'sort', in: 'query', style: 'form', explode: false },
    });
}
