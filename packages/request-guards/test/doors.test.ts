import { type DoorApps, type DoorCase, doorStarters, listenNode, runDoors } from '@holdfast/doors-test';
import { problem } from '@holdfast/problem-details';
import * as problemsExpress from '@holdfast/problem-details/express';
import * as problemsFastify from '@holdfast/problem-details/fastify';
import * as problemsHono from '@holdfast/problem-details/hono';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import * as expressDoor from '../src/express';
import * as fastifyDoor from '../src/fastify';
import * as honoDoor from '../src/hono';
import {
  type JsonBodyOptions,
  jsonBodyReader,
  noFieldsProblem,
  nulProblem,
  withRequestId,
} from '../src/index';

// One case list through every door: the guards decide in the core, each door only hands it the
// request and keeps the value where its framework expects it.
const limits: JsonBodyOptions = { maxBytes: 256, maxDepth: 8, maxMembers: 5, maxValues: 50 };
const REQUEST_ID = /^req_[A-Za-z0-9_-]{22}$/;
const quiet = { log: () => {} };

// The routes' own part, the same behind every door.
const received = (body: unknown) => ({ received: body ?? null });
const cancelled = (id: string) => ({ id, status: 'cancelled' });

const json = (body: string, contentType = 'application/json') => ({
  method: 'POST',
  path: '/orders',
  headers: { 'content-type': contentType },
  body,
});

const cases: DoorCase[] = [
  {
    name: 'every response carries a fresh request id',
    path: '/echo',
    expect: {
      status: 200,
      headers: { 'request-id': REQUEST_ID },
      body: { requestId: expect.stringMatching(REQUEST_ID) },
    },
  },
  {
    name: "a client's own Request-Id is not adopted",
    path: '/echo',
    headers: { 'Request-Id': 'forged-by-the-client' },
    expect: { status: 200, headers: { 'request-id': REQUEST_ID } },
  },
  {
    name: 'a problem carries the request id, header and body',
    path: '/nowhere',
    expect: {
      status: 404,
      code: 'not_found',
      headers: { 'request-id': REQUEST_ID },
      body: { requestId: expect.stringMatching(REQUEST_ID) },
    },
  },
  {
    name: 'a JSON body is parsed once and handed to the route',
    ...json('{"total":5,"tags":["a"]}'),
    expect: { status: 201, body: { received: { total: 5, tags: ['a'] } } },
  },
  {
    name: 'a +json media type is JSON',
    ...json('{"total":6}', 'application/merge-patch+json'),
    expect: { status: 201, body: { received: { total: 6 } } },
  },
  {
    name: 'an empty body is no body',
    ...json(''),
    expect: { status: 201, body: { received: null } },
  },
  {
    name: 'a body over maxBytes is 413',
    ...json(`{"note":"${'x'.repeat(300)}"}`),
    expect: {
      status: 413,
      code: 'payload_too_large',
      body: { detail: 'The request body is larger than 256 bytes.' },
      headers: { 'request-id': REQUEST_ID },
    },
  },
  {
    name: 'a body that is not JSON by its media type is 415 with Accept-Post',
    ...json('total=5', 'text/plain'),
    expect: {
      status: 415,
      code: 'unsupported_media_type',
      headers: { 'accept-post': 'application/json' },
    },
  },
  {
    name: 'a charset other than UTF-8 is 415',
    ...json('{"total":5}', 'application/json; charset=latin1'),
    expect: { status: 415, code: 'unsupported_media_type' },
  },
  {
    name: 'a body with no media type is 415',
    method: 'POST',
    path: '/orders',
    body: '{"total":5}',
    headers: { 'content-type': '' },
    expect: { status: 415, code: 'unsupported_media_type' },
  },
  {
    name: 'bytes that are not JSON are 400 invalid_json',
    ...json('{"total":'),
    expect: { status: 400, code: 'invalid_json' },
  },
  {
    name: 'nesting deeper than maxDepth is 400',
    ...json(`${'['.repeat(9)}${']'.repeat(9)}`),
    expect: {
      status: 400,
      code: 'validation_failed',
      body: { detail: 'The request body nests arrays and objects deeper than 8 levels.' },
    },
  },
  {
    name: 'an object over maxMembers is 400 too_many_members, named',
    ...json('{"meta":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}}'),
    expect: {
      status: 400,
      code: 'validation_failed',
      body: { errors: [{ field: 'meta', pointer: '#/meta', code: 'too_many_members' }] },
    },
  },
  {
    name: 'more values than maxValues is 400',
    ...json(`[${Array.from({ length: 60 }, () => '1').join(',')}]`),
    expect: {
      status: 400,
      code: 'validation_failed',
      body: { detail: expect.stringMatching(/more than 50 values/) },
    },
  },
  {
    name: 'U+0000 in a string is 400 invalid_characters, naming the field',
    ...json('{"name":"a\\u0000b"}'),
    expect: {
      status: 400,
      code: 'validation_failed',
      body: { errors: [{ field: 'name', pointer: '#/name', code: 'invalid_characters' }] },
    },
  },
  {
    name: 'a __proto__ key is 400 forbidden_key',
    ...json('{"a":{"__proto__":{"admin":true}}}'),
    expect: {
      status: 400,
      code: 'validation_failed',
      body: { errors: [{ field: 'a.__proto__', code: 'forbidden_key' }] },
    },
  },
  {
    name: 'a lone surrogate becomes U+FFFD',
    ...json('{"note":"\\ud800x"}'),
    expect: { status: 201, body: { received: { note: '\uFFFDx' } } },
  },
  {
    name: 'U+0000 in a query value is 400 invalid_characters',
    path: '/echo?q=a%00b',
    expect: {
      status: 400,
      code: 'validation_failed',
      body: { errors: [{ field: 'q', code: 'invalid_characters' }] },
    },
  },
  {
    name: 'U+0000 in the path is 404',
    path: '/echo%00',
    expect: {
      status: 404,
      code: 'not_found',
      body: { detail: 'No resource has a NUL character in its path.' },
    },
  },
  {
    name: 'an action that takes no input refuses a field',
    method: 'POST',
    path: '/orders/ord_1/cancel',
    body: { reason: 'x' },
    expect: { status: 400, code: 'unknown_field', body: { errors: [{ field: 'reason' }] } },
  },
  {
    name: 'an action that takes no input accepts {}',
    method: 'POST',
    path: '/orders/ord_1/cancel',
    body: {},
    expect: { status: 200, body: { id: 'ord_1', status: 'cancelled' } },
  },
  {
    name: 'an action that takes no input accepts no body',
    method: 'POST',
    path: '/orders/ord_1/cancel',
    expect: { status: 200, body: { id: 'ord_1', status: 'cancelled' } },
  },
];

function honoApp(): Hono {
  const app = new Hono();
  app.use(honoDoor.requestId());
  app.onError(problemsHono.onProblem(quiet));
  app.notFound(problemsHono.notFoundProblem(app));
  app.use(honoDoor.refuseNul());
  app.use(honoDoor.jsonBody(limits));
  app.get('/echo', (c) => c.json({ requestId: c.get('requestId') }));
  app.post('/orders', (c) => c.json(received(c.get('jsonBody')), 201));
  app.post('/orders/:id/cancel', (c) => {
    honoDoor.refuseFields(c);
    return c.json(cancelled(c.req.param('id')));
  });
  return app;
}

function expressApp(): express.Express {
  const app = express();
  app.use(expressDoor.requestId());
  app.use(expressDoor.refuseNul());
  app.use(expressDoor.jsonBody(limits));
  app.get('/echo', (req, res) => {
    res.json({ requestId: req.requestId });
  });
  app.post('/orders', (req, res) => {
    res.status(201).json(received(req.body));
  });
  app.post('/orders/:id/cancel', (req, res) => {
    expressDoor.refuseFields(req);
    res.json(cancelled(req.params.id));
  });
  app.use(problemsExpress.notFoundProblem(app));
  app.use(problemsExpress.onProblem(quiet));
  return app;
}

function fastifyApp() {
  const app = Fastify();
  app.addHook('onRequest', fastifyDoor.requestId());
  app.addHook('onRequest', fastifyDoor.refuseNul());
  fastifyDoor.jsonBody(app, limits);
  app.setErrorHandler(problemsFastify.onProblem(quiet));
  app.setNotFoundHandler(problemsFastify.notFoundProblem(app));
  app.get('/echo', async (request) => ({ requestId: request.requestId }));
  app.post('/orders', async (request, reply) => reply.code(201).send(received(request.body)));
  app.post<{ Params: { id: string } }>('/orders/:id/cancel', async (request) => {
    fastifyDoor.refuseFields(request);
    return cancelled(request.params.id);
  });
  return app;
}

// A bare Fetch handler (Next.js, Bun, Deno, Workers) calls the core: withRequestId renders what
// the route throws, with the id.
const readBody = jsonBodyReader(limits);
const fetchHandler = withRequestId(
  async (request, requestId) => {
    const url = new URL(request.url);
    const refused = nulProblem(url);
    if (refused) throw refused;
    const body = await readBody(request);
    const cancel = /^\/orders\/([^/]+)\/cancel$/.exec(url.pathname);
    const route = cancel ? 'POST /orders/:id/cancel' : `${request.method} ${url.pathname}`;
    switch (route) {
      case 'GET /echo':
        return Response.json({ requestId });
      case 'POST /orders':
        return Response.json(received(body), { status: 201 });
      case 'POST /orders/:id/cancel': {
        const fields = noFieldsProblem(body);
        if (fields) throw fields;
        return Response.json(cancelled(cancel?.[1] ?? ''));
      }
    }
    throw problem('not_found');
  },
  { log: () => {} },
);

const apps: DoorApps = { hono: honoApp, express: expressApp, fastify: fastifyApp, fetch: () => fetchHandler };
runDoors('request-guards', cases, apps);

// A body sent without Content-Length (chunked) has no length to refuse up front: every door finds
// it too large while reading it.
const doorsOnly = doorStarters(apps);
describe('a chunked body past maxBytes', () => {
  for (const [door, start] of Object.entries(doorsOnly)) {
    it(`is 413 through ${door}`, async () => {
      const running = await start();
      try {
        const chunk = new TextEncoder().encode('[1,1,1,1,1,1,1,1,1,1,');
        let sent = 0;
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            sent += 1;
            if (sent > 40) controller.close();
            else controller.enqueue(chunk);
          },
        });
        const response = await fetch(`${running.url}/orders`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          duplex: 'half',
        } as RequestInit);
        expect(response.status).toBe(413);
        expect(response.headers.get('request-id')).toMatch(REQUEST_ID);
        expect((await response.json()).code).toBe('payload_too_large');
      } finally {
        await running.close();
      }
    });
  }
});

describe('the core without a server', () => {
  it('cuts a body with no declared length at maxBytes, without reading the rest', async () => {
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new TextEncoder().encode('[1,1,1,1,1,1,1,1,1,1,'));
      },
    });
    const request = new Request('http://localhost/orders', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    await expect(readBody(request)).rejects.toMatchObject({ code: 'payload_too_large' });
    // 256 bytes is 13 chunks of 21 bytes: the reader stops at the first one past the limit.
    expect(pulled).toBeLessThan(20);
  });

  it('refuses bad options when the guard is made, not per request', () => {
    for (const bad of [{ maxBytes: 0 }, { maxDepth: 1.5 }, { maxMembers: -1 }, { maxValues: 0 }]) {
      expect(() => jsonBodyReader(bad)).toThrow(RangeError);
      expect(() => expressDoor.jsonBody(bad)).toThrow(RangeError);
      expect(() => honoDoor.jsonBody(bad)).toThrow(RangeError);
    }
  });

  it('withRequestId answers a crash as a 500 that reveals nothing, with the id', async () => {
    const handler = withRequestId(
      () => {
        throw new Error('db-7.internal refused the connection');
      },
      { header: 'X-Request-Id', generate: () => 'req_fixed', log: () => {} },
    );
    const response = await handler(new Request('http://localhost/x'));
    expect(response.status).toBe(500);
    expect(response.headers.get('x-request-id')).toBe('req_fixed');
    const text = await response.text();
    expect(text).not.toContain('db-7');
    expect(JSON.parse(text)).toMatchObject({ code: 'internal_error', requestId: 'req_fixed' });
  });

  it('the Express door refuses to pass on a body another parser read', async () => {
    const app = express();
    app.use(express.json());
    app.use(expressDoor.jsonBody(limits));
    app.post('/orders', (req, res) => {
      res.json(req.body);
    });
    app.use(problemsExpress.onProblem(quiet));
    const running = await listenNode(app);
    try {
      const response = await fetch(`${running.url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"total":5}',
      });
      expect(response.status).toBe(500);
      expect((await response.json()).code).toBe('internal_error');
    } finally {
      await running.close();
    }
  });

  it('withRequestId copies a response whose headers are immutable', async () => {
    const handler = withRequestId(() => Response.redirect('http://localhost/elsewhere', 302), {
      generate: () => 'req_fixed',
    });
    const response = await handler(new Request('http://localhost/x'));
    expect(response.status).toBe(302);
    expect(response.headers.get('request-id')).toBe('req_fixed');
  });
});
