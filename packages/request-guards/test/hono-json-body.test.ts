import type { AddressInfo } from 'node:net';
import { problem } from '@holdfast/problem-details';
import { notFoundProblem, onProblem } from '@holdfast/problem-details/hono';
import { serve } from '@hono/node-server';
import fc from 'fast-check';
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonBody, requestId } from '../src/hono';

function buildApp() {
  const app = new Hono();
  app.use(requestId());
  app.use('/v1/*', jsonBody({ maxBytes: 64 }));
  app.onError(onProblem({ log: () => {} }));
  app.notFound(notFoundProblem(app));
  app.get('/v1/orders', (c) => c.json({ data: [], pageInfo: { nextCursor: null, hasMore: false } }));
  app.post('/v1/orders', (c) => c.json({ received: c.get('jsonBody') ?? null }, 201));
  app.post('/v1/echo-validated', async (c) =>
    c.json({ viaHono: await c.req.json(), text: await c.req.text() }),
  );
  app.delete('/v1/orders/:id', (c) => c.body(null, 204));
  app.get('/v1/conflict', () => {
    throw problem('version_conflict', { detail: 'ETag mismatch.' });
  });
  app.get('/v1/crash/:secret', (c) => {
    throw new Error(`connection to db-${c.req.param('secret')}.internal failed`);
  });
  app.get('/v1/http-exception', () => {
    throw new HTTPException(403, { message: 'secret reason' });
  });
  return app;
}

async function problemOf(response: Response) {
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  return (await response.json()) as Record<string, unknown>;
}

describe('Hono adapter, in process', () => {
  const app = buildApp();

  it('sets Request-Id on success and on failure, matching the body', async () => {
    const ok = await app.request('/v1/orders');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('request-id')).toMatch(/^req_[A-Za-z0-9_-]{22}$/);
    const missing = await app.request('/nope');
    const body = await problemOf(missing);
    expect(missing.status).toBe(404);
    expect(body.code).toBe('not_found');
    expect(body.instance).toBe('/nope');
    expect(body.requestId).toBe(missing.headers.get('request-id'));
    const other = await app.request('/nope');
    expect(other.headers.get('request-id')).not.toBe(missing.headers.get('request-id'));
  });

  it('does not trust an incoming Request-Id', async () => {
    const response = await app.request('/v1/orders', { headers: { 'Request-Id': 'forged' } });
    expect(response.headers.get('request-id')).not.toBe('forged');
  });

  it('answers 405 with Allow for a known path and the wrong method', async () => {
    const response = await app.request('/v1/orders', { method: 'PUT' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD, POST');
    expect((await problemOf(response)).code).toBe('method_not_allowed');
    const item = await app.request('/v1/orders/ord_1', { method: 'GET' });
    expect(item.status).toBe(405);
    expect(item.headers.get('allow')).toBe('DELETE');
  });

  it('renders thrown problems with instance and request id', async () => {
    const response = await app.request('/v1/conflict');
    expect(response.status).toBe(409);
    expect(await problemOf(response)).toMatchObject({ code: 'version_conflict', instance: '/v1/conflict' });
  });

  it('maps HTTPException by status without echoing its message', async () => {
    const response = await app.request('/v1/http-exception');
    expect(response.status).toBe(403);
    const body = await problemOf(response);
    expect(body.code).toBe('forbidden');
    expect(JSON.stringify(body)).not.toContain('secret reason');
  });

  it.each([
    ['text/plain', '{"a":1}', 415, 'unsupported_media_type'],
    ['application/x-www-form-urlencoded', 'a=1', 415, 'unsupported_media_type'],
    ['application/json; charset=latin1', '{"a":1}', 415, 'unsupported_media_type'],
    ['application/json', '{"a":', 400, 'invalid_json'],
    ['application/json', '\u00ff{}', 400, 'invalid_json'],
    ['application/json', 'x'.repeat(65), 413, 'payload_too_large'],
  ])('a body sent as %s (%s) gets %i %s', async (contentType, body, status, code) => {
    const response = await app.request('/v1/orders', {
      method: 'POST',
      headers: { 'Content-Type': contentType },
      body,
    });
    expect(response.status).toBe(status);
    expect((await problemOf(response)).code).toBe(code);
    expect(response.headers.get('request-id')).toBeTruthy();
  });

  it('property: a body nesting deeper than maxDepth is 400 validation_failed, shallower ones pass', async () => {
    const app = new Hono();
    app.use(jsonBody({ maxDepth: 4 }));
    app.onError(onProblem({ log: () => {} }));
    app.post('/', (c) => c.json({ ok: true }));
    // A value of exactly `depth` levels: arrays and objects in any mix, with shallow siblings.
    const nested = (depth: number) =>
      fc.array(fc.boolean(), { minLength: depth, maxLength: depth }).map((kinds) => {
        let value: unknown = 1;
        kinds.forEach((asArray, level) => {
          // Empty containers beside the wrapped value, except in the innermost level, where
          // they would add a level of their own.
          const [empty, list] = level === 0 ? [0, 'x'] : [{}, []];
          value = asArray ? [0, value, empty] : { a: list, b: value };
        });
        return value;
      });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 9 }).chain((depth) => fc.tuple(fc.constant(depth), nested(depth))),
        async ([depth, value]) => {
          const response = await app.request('/', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify(value),
          });
          expect(response.status).toBe(depth <= 4 ? 200 : 400);
          if (depth > 4) expect((await problemOf(response)).detail).toMatch(/deeper than 4 levels/);
        },
      ),
    );
  });

  it('answers a body nested 100,000 deep with 400, not a stack overflow', async () => {
    const deep = `{"metadata":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const app = new Hono();
    app.use(jsonBody());
    app.onError(onProblem({ log: () => {} }));
    app.post('/', (c) => c.json({ echoed: JSON.stringify(c.get('jsonBody')).length }));
    const response = await app.request('/', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: deep,
    });
    expect(response.status).toBe(400);
    expect((await problemOf(response)).code).toBe('validation_failed');
    expect(() => jsonBody({ maxDepth: 0 })).toThrow(RangeError);
  });

  it('refuses bytes that are not UTF-8', async () => {
    const response = await app.request('/v1/orders', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: new Uint8Array([0x22, 0xc3, 0x28, 0x22]),
    });
    expect(response.status).toBe(400);
    expect((await problemOf(response)).code).toBe('invalid_json');
  });

  it('accepts JSON, +json types and empty bodies; later readers see the same body', async () => {
    const created = await app.request('/v1/orders', {
      method: 'POST',
      headers: { 'Content-Type': 'application/merge-patch+json; charset=utf-8' },
      body: '{"total":100}',
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toEqual({ received: { total: 100 } });
    const empty = await app.request('/v1/orders', { method: 'POST' });
    expect(await empty.json()).toEqual({ received: null });
    const echoed = await app.request('/v1/echo-validated', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{ "a" : [1, 2] }',
    });
    expect(await echoed.json()).toEqual({ viaHono: { a: [1, 2] }, text: '{ "a" : [1, 2] }' });
  });
});

/** One request to `app` served by @hono/node-server on a free port, read to its end. */
async function overHttp(app: Hono, path: string, init: RequestInit): Promise<Response> {
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`, init);
    return new Response(await response.arrayBuffer(), response);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('Hono adapter, over real HTTP', () => {
  let url = '';
  let close: () => Promise<void> = async () => {};

  beforeAll(async () => {
    const server = serve({ fetch: buildApp().fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  });
  afterAll(() => close());

  it('stops reading a chunked body past the limit and answers 413', async () => {
    const chunks = ['{"a":"', 'x'.repeat(40), 'y'.repeat(40), '"}'];
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(next));
      },
    });
    const response = await fetch(`${url}/v1/orders`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect((await problemOf(response)).code).toBe('payload_too_large');
  });

  it('reads JSON bodies from the Node request itself, in one chunk or many, and hands the same bytes to c.req', async () => {
    const text = '{ "a" : [1, 2], "b": "ü" }';
    const one = await fetch(`${url}/v1/echo-validated`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: text,
    });
    expect(await one.json()).toEqual({ viaHono: { a: [1, 2], b: 'ü' }, text });
    const bytes = new TextEncoder().encode(text);
    const pieces = [bytes.slice(0, 3), bytes.slice(3, 22), bytes.slice(22)];
    const many = await fetch(`${url}/v1/echo-validated`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: new ReadableStream<Uint8Array>({
        async pull(controller) {
          const next = pieces.shift();
          await new Promise((resolve) => setTimeout(resolve, 5));
          if (next === undefined) controller.close();
          else controller.enqueue(next);
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(await many.json()).toEqual({ viaHono: { a: [1, 2], b: 'ü' }, text });
  });

  it('serves the exact bytes to a handler that reads the WHATWG body after jsonBody()', async () => {
    const app = new Hono();
    app.use(jsonBody());
    app.post('/raw', async (c) => c.json({ raw: await c.req.raw.text(), parsed: c.get('jsonBody') }));
    const response = await overHttp(app, '/raw', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '[1,  2]',
    });
    expect(await response.json()).toEqual({ raw: '[1,  2]', parsed: [1, 2] });
  });

  it('reads an empty body as no value, and leaves c.req.text() an empty string', async () => {
    const app = new Hono();
    app.use(jsonBody());
    app.post('/empty', async (c) =>
      c.json({ viaGet: c.get('jsonBody') ?? 'none', text: await c.req.text() }),
    );
    const response = await overHttp(app, '/empty', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(await response.json()).toEqual({ viaGet: 'none', text: '' });
  });

  it('survives a client that disconnects in the middle of its body, and keeps serving', async () => {
    const { connect } = await import('node:net');
    const { port } = new URL(url);
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          'POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"a":',
        );
        setTimeout(() => socket.destroy(), 20);
      });
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
    const after = await fetch(`${url}/v1/orders`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"a":1}',
    });
    expect(after.status).toBe(201);
    expect(await after.json()).toEqual({ received: { a: 1 } });
  });

  it('never leaks what a crashing handler threw', async () => {
    await fc.assert(
      fc.asyncProperty(fc.stringMatching(/^[a-z0-9]{16}$/), async (secret) => {
        const response = await fetch(`${url}/v1/crash/${secret}`);
        expect(response.status).toBe(500);
        const text = await response.text();
        expect(text.replace(`/v1/crash/${secret}`, '')).not.toContain(secret);
        expect(text).not.toMatch(/\.internal|stack|Error:|at \//);
        expect(JSON.parse(text).code).toBe('internal_error');
        expect(response.headers.get('request-id')).toBe(JSON.parse(text).requestId);
      }),
      { numRuns: 25 },
    );
  });
});

describe('Request-Id on HEAD', () => {
  it('survives Hono answering HEAD with the GET route', async () => {
    const response = await buildApp().request('/v1/orders', { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('request-id')).toMatch(/^req_/);
  });
});

describe('Request-Id on responses built by hand', () => {
  it('is added to a Response a handler returns itself, and to HEAD answers', async () => {
    const app = new Hono();
    app.use(requestId());
    app.get('/raw', () => new Response('raw', { status: 202 }));
    app.get('/json', (c) => c.json({ ok: true }));
    const raw = await app.request('/raw');
    expect(raw.status).toBe(202);
    expect(raw.headers.get('request-id')).toMatch(/^req_/);
    const head = await app.request('/json', { method: 'HEAD' });
    expect(head.headers.get('request-id')).toMatch(/^req_/);
  });
});

describe('bodies and throws the framework passes through', () => {
  it('lets a validator read an empty JSON body after jsonBody()', async () => {
    const app = new Hono();
    app.use(requestId());
    app.use(jsonBody());
    app.onError(onProblem({ log: () => {} }));
    app.post('/empty', async (c) => c.json({ text: await c.req.text() }));
    const response = await app.request('/empty', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '',
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ text: '' });
  });

  it('answers a thrown non-Error as a 500 problem with the request id, revealing nothing', async () => {
    const app = new Hono();
    app.use(requestId());
    app.onError(onProblem({ log: () => {} }));
    app.get('/string', () => {
      throw 'S3CR3T string';
    });
    const response = await app.request('/string');
    expect(response.status).toBe(500);
    const body = await problemOf(response);
    expect(body.code).toBe('internal_error');
    expect(body.requestId).toBe(response.headers.get('request-id'));
    expect(JSON.stringify(body)).not.toContain('S3CR3T');
  });
});
