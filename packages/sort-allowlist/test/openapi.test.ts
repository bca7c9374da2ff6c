import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { defineSortAllowlist, sortParameter, sortSchema } from '../src/index';
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
  it('has a pattern that accepts exactly the allowed syntax', () => {
    const pattern = new RegExp(sortSchema(orders).pattern);
    for (const ok of ['createdAt', '-total', 'status,-createdAt', '-status,total,createdAt']) {
      expect(pattern.test(ok)).toBe(true);
    }
    for (const bad of ['', 'foo', '--total', 'total,', 'a,b,c,d', 'total,status,createdAt,total']) {
      expect(pattern.test(bad)).toBe(false);
    }
  });

  it('builds a Parameter Object naming the keys, ranks and default', () => {
    const parameter = sortParameter(orders);
    expect(parameter).toMatchObject({ name: 'sort', in: 'query', required: false });
    expect(parameter.schema).toMatchObject({
      default: '-createdAt',
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
      description: expect.stringContaining('Allowed keys'),
      schema: {
        type: 'string',
        pattern: sortSchema(orders).pattern,
        default: '-createdAt',
        'x-sort-keys': ['createdAt', 'total', 'status'],
      },
    });
    // Documentation only: validation is parseSort's, so clients get invalid_sort.
    expect(sortQuerySchema(orders).safeParse('bogus').success).toBe(true);
  });
});
