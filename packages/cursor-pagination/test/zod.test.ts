import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { cappedTotal, pageEnvelope } from '../src/envelope';
import { listQueryShape, pageSchema } from '../src/zod';
import { itemSort } from './fixtures';

describe('zod schemas for OpenAPI', () => {
  const Item = z.object({ id: z.string() });

  it('describes the envelope that pageEnvelope builds', () => {
    const schema = pageSchema(Item);
    expect(schema.safeParse(pageEnvelope([{ id: 'a' }], { nextCursor: 'c', hasMore: true })).success).toBe(
      true,
    );
    expect(
      schema.safeParse(pageEnvelope([], { nextCursor: null, hasMore: false, total: cappedTotal(20_000) }))
        .success,
    ).toBe(true);
    expect(schema.safeParse({ data: [] }).success).toBe(false);
  });

  it('declares sort, limit, cursor and include in a @hono/zod-openapi document', () => {
    const app = new OpenAPIHono();
    const route = createRoute({
      method: 'get',
      path: '/v1/items',
      request: { query: z.object({ ...listQueryShape(itemSort) }).strict() },
      responses: {
        200: { description: 'Items', content: { 'application/json': { schema: pageSchema(Item) } } },
      },
    });
    app.openapi(route, (c) => c.json({ data: [], pageInfo: { nextCursor: null, hasMore: false } }, 200));
    const document = app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 'test', version: '1' } });
    const parameters = document.paths?.['/v1/items']?.get?.parameters ?? [];
    const names = parameters.map((parameter) => ('name' in parameter ? parameter.name : ''));
    expect(names).toEqual(['sort', 'limit', 'cursor', 'include']);
    expect(JSON.stringify(parameters)).toContain('clamped, not rejected');
    expect(document.components?.schemas?.PageInfo).toBeDefined();
  });
});
