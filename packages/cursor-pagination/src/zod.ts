import type { SortAllowlist } from '@holdfast/sort-allowlist';
import { sortQuerySchema } from '@holdfast/sort-allowlist/zod';
import { z } from 'zod';
import { DEFAULT_LIMIT, MAX_LIMIT } from './limit';

type Optional = z.ZodOptional<z.ZodString>;

/** The zod shape of the list query parameters (`sort`, `limit`, `cursor`, `include`). */
export interface ListQueryShape {
  sort: Optional;
  limit: Optional;
  cursor: Optional;
  include: Optional;
}

/**
 * The list query parameters as a zod v4 shape with OpenAPI descriptions, to spread into a
 * route's strict query object next to its filters (so unknown parameters can be refused).
 * Every parameter is a plain optional string on purpose: `paginate` validates, clamps and
 * answers with the contract's codes (`limit` is clamped, never rejected).
 *
 * @example
 * ```ts
 * import { createRoute, z } from '@hono/zod-openapi';
 * const query = z.object({ ...listQueryShape(orderSort), status: z.enum(['pending', 'shipped', 'cancelled']).optional() });
 * const route = createRoute({ method: 'get', path: '/v1/orders', request: { query }, responses: { 200: { description: 'Orders', content: { 'application/json': { schema: pageSchema(Order) } } } } });
 * ```
 */
export function listQueryShape(allowlist: SortAllowlist): ListQueryShape {
  return {
    sort: sortQuerySchema(allowlist),
    // The document declares what clients should send (an integer); zod takes the raw text, so
    // that `paginate` clamps rather than rejects (the metadata's `type` replaces zod's `string`).
    limit: z
      .string()
      .optional()
      .meta({
        type: 'integer',
        minimum: 1,
        maximum: MAX_LIMIT,
        description: `Page size, default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}. Missing, non-numeric or zero gives ${DEFAULT_LIMIT}; below 1 gives 1; above ${MAX_LIMIT} gives ${MAX_LIMIT} (clamped, not rejected).`,
        example: DEFAULT_LIMIT,
        default: DEFAULT_LIMIT,
      }),
    cursor: z.string().optional().meta({
      description:
        'Opaque cursor from a previous pageInfo.nextCursor; absent for the first page. Valid only with the same sort and filters, for the same account; otherwise 400 invalid_cursor.',
    }),
    include: z
      .string()
      .optional()
      .meta({
        enum: ['total'],
        description: `"total" adds pageInfo.totalCount (exact up to 10,000; above that 10000 with pageInfo.totalCountCapped: true).`,
        example: 'total',
      }),
  };
}

/** The zod schema of `pageInfo`. */
export type PageInfoSchema = z.ZodObject<{
  nextCursor: z.ZodNullable<z.ZodString>;
  hasMore: z.ZodBoolean;
  totalCount: z.ZodOptional<z.ZodNumber>;
  totalCountCapped: z.ZodOptional<z.ZodBoolean>;
}>;

/**
 * The zod schema of `pageInfo`, for response documentation.
 *
 * @example
 * ```ts
 * pageInfoSchema().parse({ nextCursor: null, hasMore: false });
 * ```
 */
export function pageInfoSchema(): PageInfoSchema {
  return z
    .object({
      nextCursor: z
        .string()
        .nullable()
        .meta({ description: 'Cursor of the next page; null on the last page.' }),
      hasMore: z.boolean().meta({ description: 'True when more rows exist after this page.' }),
      totalCount: z
        .number()
        .int()
        .optional()
        .meta({ description: 'With include=total: the count, at most 10000.' }),
      totalCountCapped: z
        .boolean()
        .optional()
        .meta({ description: 'With include=total: true when the count stopped at 10000.' }),
    })
    .meta({ id: 'PageInfo' });
}

/**
 * The zod schema of the `{ data, pageInfo }` envelope around an item schema.
 *
 * @example
 * ```ts
 * const OrderPage = pageSchema(Order);
 * ```
 */
export function pageSchema<T extends z.ZodType>(
  item: T,
): z.ZodObject<{ data: z.ZodArray<T>; pageInfo: PageInfoSchema }> {
  return z.object({ data: z.array(item), pageInfo: pageInfoSchema() });
}
