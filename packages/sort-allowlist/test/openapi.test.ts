import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { defineSortAllowlist, sortParameter } from '../src/index';
import { sortSchema } from '../src/openapi';
import { sortQuerySchema } from '../src/zod';

const orders = defineSortAllowlist({
  fields: {
    createdAt: { column: 'created_at', type: 'timestamp' },
    total: { column: 'total', type: 'number' },
    status: { column: 'status', type: 'enum', rank: ['pending', 'shipped', 'cancelled'] },
  },
  id: { column: 'id' },
  default: '-createdAt',
});

describe('OpenAPI description of sort (sorting rule 11)', () => {
  it('offers exactly each alias ascending and descending, at most maxKeys of them', () => {
    const schema = sortSchema(orders);
    expect(schema.items.enum).toEqual(['createdAt', '-createdAt', 'total', '-total', 'status', '-status']);
    expect(schema).toMatchObject({ type: 'array', minItems: 1, maxItems: 3, uniqueItems: true });
    expect(schema.default).toEqual(['-createdAt']);
  });

  it('builds a Parameter Object naming the keys, ranks and default', () => {
    const parameter = sortParameter(orders);
    expect(parameter).toMatchObject({
      name: 'sort',
      in: 'query',
      required: false,
      style: 'form',
      explode: false,
    });
    expect(parameter.schema).toMatchObject({
      default: ['-createdAt'],
      'x-sort-keys': ['createdAt', 'total', 'status'],
    });
    expect(parameter.description).toContain('`status` (ranked pending < shipped < cancelled');
    expect(parameter.description).toContain('Default: `-createdAt`');
  });

  it('declares the parameter in a @hono/zod-openapi document', () => {
    const app = new OpenAPIHono();
    const route = createRoute({
      method: 'get',
      path: '/v1/orders',
      request: { query: z.object({ sort: sortQuerySchema(orders) }) },
      responses: { 200: { description: 'A page of orders' } },
    });
    app.openapi(route, (c) => c.json({ data: [] }, 200));
    const document = app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 'test', version: '1' } });
    const parameters = document.paths?.['/v1/orders']?.get?.parameters ?? [];
    expect(parameters).toHaveLength(1);
    expect(parameters[0]).toMatchObject({
      name: 'sort',
      in: 'query',
      required: false,
      style: 'form',
      explode: false,
      description: expect.stringContaining('Allowed keys'),
      schema: {
        type: 'array',
        items: { type: 'string', enum: sortSchema(orders).items.enum },
        default: ['-createdAt'],
        'x-sort-keys': ['createdAt', 'total', 'status'],
      },
    });
    // Documentation only: validation is parseSort's, so clients get invalid_sort.
    expect(sortQuerySchema(orders).safeParse('bogus').success).toBe(true);
  });
});
