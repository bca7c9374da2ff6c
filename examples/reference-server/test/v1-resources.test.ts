import { readFileSync } from 'node:fs';
import { OpenAPIHono } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { registerResources, V1_RESOURCES } from '../src/app';
import type { AppEnv } from '../src/context';

// The one list of /v1 resources (src/app.ts) against the published contract: the scope check
// knows exactly the segments the document serves, so no documented path answers 404 for want
// of an entry, and no entry names a segment nothing serves.
describe('V1_RESOURCES, the one place a /v1 resource is declared', () => {
  it('names exactly the first path segments of the published /v1 document', () => {
    const document = JSON.parse(readFileSync(new URL('../openapi/v1.json', import.meta.url), 'utf8')) as {
      paths: Record<string, unknown>;
    };
    const served = new Set(
      Object.keys(document.paths)
        .filter((path) => path.startsWith('/v1/'))
        .map((path) => path.split('/')[2]),
    );
    const declared = V1_RESOURCES.map((resource) => resource.segment);
    expect(new Set(declared).size).toBe(declared.length);
    expect([...served].sort()).toEqual([...declared].sort());
  });

  it('refuses to build when a module registers a route outside its resource segment', () => {
    const v1 = new OpenAPIHono<AppEnv>();
    const widgets = (app: typeof v1) => {
      app.get('/widgets', (c) => c.json([]));
      app.get('/gadgets/:id', (c) => c.json({}));
    };
    expect(() => registerResources(v1, undefined, [{ segment: 'widgets', routes: [widgets] }])).toThrow(
      'GET /v1/gadgets/:id is registered by the widgets resource',
    );
    const fine = new OpenAPIHono<AppEnv>();
    registerResources(fine, undefined, [
      { segment: 'widgets', routes: [(app) => app.get('/widgets/:id', (c) => c.json({}))] },
    ]);
    expect(fine.routes.map((route) => route.path)).toEqual(['/widgets/:id']);
  });
});
