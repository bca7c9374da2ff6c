import { onProblem } from '@holdfast/problem-details/hono';
import fc from 'fast-check';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { jsonBody, refuseFields, refuseNul } from '../src/hono';
import { missingBody, noFieldsProblem } from '../src/index';

describe('noFieldsProblem', () => {
  it('passes no body and {}', () => {
    expect(noFieldsProblem(undefined)).toBeUndefined();
    expect(noFieldsProblem({})).toBeUndefined();
  });

  it('names every field as unknown_field', () => {
    const refused = noFieldsProblem({ reason: 'x', note: 1 });
    expect(refused?.code).toBe('unknown_field');
    expect(refused?.toJSON().errors?.map((e) => e.field)).toEqual(['reason', 'note']);
  });

  it('refuses anything that is not an object as validation_failed', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.integer())),
        (body) => {
          const refused = noFieldsProblem(body);
          expect(refused?.code).toBe('validation_failed');
          expect(refused?.toJSON().errors?.[0]).toMatchObject({ field: '(root)', code: 'invalid_type' });
        },
      ),
    );
  });

  it('missingBody is 400 validation_failed', () => {
    expect(missingBody().status).toBe(400);
    expect(missingBody().code).toBe('validation_failed');
  });
});

describe('refuseFields and refuseNul', () => {
  const app = new Hono();
  app.onError(onProblem());
  app.use(jsonBody());
  app.use(refuseNul());
  app.post('/cancel', (c) => {
    refuseFields(c);
    return c.json({ cancelled: true });
  });
  app.get('/items/*', (c) => c.json({ ok: true }));

  it('lets an action without input through with no body or {}, and refuses fields', async () => {
    expect((await app.request('/cancel', { method: 'POST' })).status).toBe(200);
    const json = { 'content-type': 'application/json' };
    expect((await app.request('/cancel', { method: 'POST', body: '{}', headers: json })).status).toBe(200);
    const refused = await app.request('/cancel', { method: 'POST', body: '{"why":1}', headers: json });
    expect(refused.status).toBe(400);
    expect((await refused.json()).code).toBe('unknown_field');
  });

  it('answers U+0000 in the path 404 and in the query 400 naming the parameter', async () => {
    expect((await app.request('/items/a%00b')).status).toBe(404);
    const query = await app.request('/items/a?q=x%00');
    expect(query.status).toBe(400);
    expect((await query.json()).errors).toEqual([
      { field: 'q', code: 'invalid_characters', detail: 'Must not contain U+0000.' },
    ]);
    expect((await app.request('/items/a?q=x')).status).toBe(200);
  });
});
