import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { describe, expect, it } from 'vitest';
import { notFoundProblem, onProblem } from '../src/hono';
import { problem } from '../src/index';

// The error and not-found handlers alone; with the request-id and body middleware of the other
// packages they are exercised together in @holdfast/request-guards' tests.
function buildApp() {
  const app = new Hono();
  app.use(async (c, next) => {
    c.set('requestId', 'req_test');
    await next();
  });
  app.onError(onProblem({ log: () => {} }));
  app.notFound(notFoundProblem(app));
  app.get('/v1/orders', (c) => c.json([]));
  app.post('/v1/orders', (c) => c.json({}, 201));
  app.get('/v1/conflict', () => {
    throw problem('version_conflict', { detail: 'ETag mismatch.' });
  });
  app.get('/v1/crash', () => {
    throw new Error('connection to db-7.internal failed');
  });
  app.get('/v1/http-exception', () => {
    throw new HTTPException(403, { message: 'secret reason' });
  });
  return app;
}

async function problemOf(response: Response): Promise<Record<string, unknown>> {
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  return (await response.json()) as Record<string, unknown>;
}

describe('onProblem and notFoundProblem', () => {
  const app = buildApp();

  it('answers 404 not_found with instance and the request id', async () => {
    const response = await app.request('/nope');
    expect(response.status).toBe(404);
    expect(await problemOf(response)).toMatchObject({
      code: 'not_found',
      instance: '/nope',
      requestId: 'req_test',
    });
  });

  it('answers 405 with Allow for a known path and the wrong method', async () => {
    const response = await app.request('/v1/orders', { method: 'DELETE' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD, POST');
    expect((await problemOf(response)).code).toBe('method_not_allowed');
  });

  it('renders thrown problems, maps HTTPException by status and reveals nothing of a crash', async () => {
    const conflict = await app.request('/v1/conflict');
    expect(conflict.status).toBe(409);
    expect(await problemOf(conflict)).toMatchObject({ code: 'version_conflict', requestId: 'req_test' });
    const mapped = await app.request('/v1/http-exception');
    expect(mapped.status).toBe(403);
    expect(JSON.stringify(await problemOf(mapped))).not.toContain('secret reason');
    const crash = await app.request('/v1/crash');
    expect(crash.status).toBe(500);
    const text = await crash.text();
    expect(JSON.parse(text).code).toBe('internal_error');
    expect(text).not.toContain('internal failed');
  });
});
