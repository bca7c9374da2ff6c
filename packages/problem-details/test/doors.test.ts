import { type DoorApps, type DoorCase, runDoors } from '@holdfast/doors-test';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as expressDoor from '../src/express';
import * as fastifyDoor from '../src/fastify';
import * as honoDoor from '../src/hono';
import { allowedBy, notFoundOrNotAllowed } from '../src/http';
import { defineProblems, fromZodError, problem, toProblemResponse } from '../src/index';

// The behaviour, written once: each door routes to these and renders what they throw.
const Query = z.object({ n: z.coerce.number().int() });
const routes = {
  thing: (id: string) => ({ id }),
  conflict: () => {
    throw problem('version_conflict', { detail: 'ETag mismatch.' });
  },
  limited: () => {
    throw problem('rate_limited', { retryAfter: 7 });
  },
  crash: () => {
    throw new Error('connection to db-7.internal failed');
  },
  validated: (n: string | undefined) => {
    const parsed = Query.safeParse({ n });
    if (!parsed.success) throw fromZodError(parsed.error);
    return { n: parsed.data.n };
  },
};
const quiet = { log: () => {} };

const cases: DoorCase[] = [
  { name: 'a route answers', path: '/things/7', expect: { status: 200, body: { id: '7' } } },
  {
    name: 'a thrown ProblemError is rendered as it is',
    path: '/conflict',
    expect: {
      status: 409,
      code: 'version_conflict',
      body: { status: 409, detail: 'ETag mismatch.', instance: '/conflict' },
    },
  },
  {
    name: 'a retryable problem carries Retry-After',
    path: '/limited',
    expect: { status: 429, code: 'rate_limited', headers: { 'retry-after': '7' } },
  },
  {
    name: 'an unknown error is a 500 that reveals nothing',
    path: '/crash',
    expect: {
      status: 500,
      code: 'internal_error',
      body: { detail: 'An unexpected error occurred. Quote the request id when reporting it.' },
    },
  },
  {
    name: 'a zod error is 400 validation_failed naming the field',
    path: '/validated?n=abc',
    expect: { status: 400, code: 'validation_failed', body: { errors: [{ field: 'n' }] } },
  },
  { name: 'validated input passes', path: '/validated?n=5', expect: { status: 200, body: { n: 5 } } },
  {
    name: 'an unknown path is 404 not_found',
    path: '/nowhere?x=1',
    expect: { status: 404, code: 'not_found', body: { instance: '/nowhere' } },
  },
  {
    name: 'a known path under another method is 405 with Allow',
    method: 'DELETE',
    path: '/things/7',
    expect: {
      status: 405,
      code: 'method_not_allowed',
      headers: { allow: 'GET, HEAD, POST' },
      body: { detail: 'DELETE is not allowed on /things/7; allowed: GET, HEAD, POST.' },
    },
  },
];

function honoApp(): Hono {
  const app = new Hono();
  app.onError(honoDoor.onProblem(quiet));
  app.notFound(honoDoor.notFoundProblem(app));
  app.get('/things/:id', (c) => c.json(routes.thing(c.req.param('id'))));
  app.post('/things/:id', (c) => c.json(routes.thing(c.req.param('id')), 201));
  app.get('/conflict', routes.conflict);
  app.get('/limited', routes.limited);
  app.get('/crash', routes.crash);
  app.get('/validated', (c) => c.json(routes.validated(c.req.query('n'))));
  return app;
}

function expressApp(): express.Express {
  const app = express();
  app.get('/things/:id', (req, res) => {
    res.json(routes.thing(req.params.id));
  });
  app.post('/things/:id', (req, res) => {
    res.status(201).json(routes.thing(req.params.id));
  });
  app.get('/conflict', routes.conflict);
  app.get('/limited', routes.limited);
  app.get('/crash', async () => routes.crash());
  app.get('/validated', (req, res) => {
    res.json(routes.validated(typeof req.query.n === 'string' ? req.query.n : undefined));
  });
  app.use(expressDoor.notFoundProblem(app));
  app.use(expressDoor.onProblem(quiet));
  return app;
}

function fastifyApp() {
  const app = Fastify();
  app.setErrorHandler(fastifyDoor.onProblem(quiet));
  app.setNotFoundHandler(fastifyDoor.notFoundProblem(app));
  app.get<{ Params: { id: string } }>('/things/:id', async (request) => routes.thing(request.params.id));
  app.post<{ Params: { id: string } }>('/things/:id', async (request, reply) =>
    reply.code(201).send(routes.thing(request.params.id)),
  );
  app.get('/conflict', routes.conflict);
  app.get('/limited', routes.limited);
  app.get('/crash', routes.crash);
  app.get<{ Querystring: { n?: string } }>('/validated', async (request) =>
    routes.validated(request.query.n),
  );
  return app;
}

// A bare Fetch handler (what a Next.js route, Bun or a Worker writes) calls the core directly.
const fetchRoutes: Record<string, (url: URL) => unknown> = {
  'GET /conflict': routes.conflict,
  'GET /limited': routes.limited,
  'GET /crash': routes.crash,
  'GET /validated': (url) => routes.validated(url.searchParams.get('n') ?? undefined),
};
async function fetchHandler(request: Request): Promise<Response> {
  const url = new URL(request.url);
  const thing = /^\/things\/([^/]+)$/.exec(url.pathname);
  if (thing?.[1] !== undefined && (request.method === 'GET' || request.method === 'POST')) {
    return Response.json(routes.thing(thing[1]), { status: request.method === 'POST' ? 201 : 200 });
  }
  const route = fetchRoutes[`${request.method} ${url.pathname}`];
  if (route) return Response.json(route(url));
  const allowed = allowedBy(
    (method) =>
      (thing !== null && (method === 'GET' || method === 'POST')) ||
      `${method} ${url.pathname}` in fetchRoutes,
  );
  throw notFoundOrNotAllowed(request.method, url.pathname, allowed);
}

const apps: DoorApps = { hono: honoApp, express: expressApp, fastify: fastifyApp, fetch: () => fetchHandler };
runDoors('problem-details', cases, apps);

// Problem types belong to the adopter: one setting per door puts every code built with the
// default base (the shared catalogue, every package's, the 404/405 handler) under its own base,
// and leaves a catalogue with a base of its own as it is.
const BASE = 'https://api.example.com/problems/';
const packageProblems = defineProblems({ invalid_cursor: { status: 400, title: 'Invalid cursor' } });
const ownProblems = defineProblems(
  { out_of_stock: { status: 409, title: 'Out of stock' } },
  { typeBase: 'https://other.example/errors/' },
);
const based = {
  shared: () => {
    throw problem('forbidden');
  },
  package: () => {
    throw packageProblems.create('invalid_cursor');
  },
  own: () => {
    throw ownProblems.create('out_of_stock');
  },
};
const baseCases: DoorCase[] = [
  {
    name: 'a shared code renders under the adopter base',
    path: '/shared',
    expect: { status: 403, code: 'forbidden', body: { type: `${BASE}forbidden`, instance: '/shared' } },
  },
  {
    name: "a package's code renders under the adopter base",
    path: '/package',
    expect: { status: 400, code: 'invalid_cursor', body: { type: `${BASE}invalid_cursor` } },
  },
  {
    name: 'the 404 handler renders under the adopter base',
    path: '/nowhere',
    expect: { status: 404, code: 'not_found', body: { type: `${BASE}not_found` } },
  },
  {
    name: 'the 405 handler renders under the adopter base',
    method: 'POST',
    path: '/shared',
    expect: { status: 405, code: 'method_not_allowed', body: { type: `${BASE}method_not_allowed` } },
  },
  {
    name: 'a crash renders under the adopter base and reveals nothing',
    path: '/crash',
    expect: { status: 500, code: 'internal_error', body: { type: `${BASE}internal_error` } },
  },
  {
    name: 'a catalogue with its own base keeps it',
    path: '/own',
    expect: {
      status: 409,
      code: 'out_of_stock',
      body: { type: 'https://other.example/errors/out_of_stock' },
    },
  },
];

function honoBased(): Hono {
  const app = new Hono();
  app.use(honoDoor.problemTypeBase(BASE));
  app.onError(honoDoor.onProblem(quiet));
  app.notFound(honoDoor.notFoundProblem(app));
  app.get('/shared', based.shared);
  app.get('/package', based.package);
  app.get('/own', based.own);
  app.get('/crash', routes.crash);
  return app;
}

function expressBased(): express.Express {
  const app = express();
  app.use(expressDoor.problemTypeBase(BASE));
  app.get('/shared', based.shared);
  app.get('/package', based.package);
  app.get('/own', based.own);
  app.get('/crash', routes.crash);
  app.use(expressDoor.notFoundProblem(app));
  app.use(expressDoor.onProblem(quiet));
  return app;
}

function fastifyBased() {
  const app = Fastify();
  app.addHook('onRequest', fastifyDoor.problemTypeBase(BASE));
  app.setErrorHandler(fastifyDoor.onProblem(quiet));
  app.setNotFoundHandler(fastifyDoor.notFoundProblem(app));
  app.get('/shared', based.shared);
  app.get('/package', based.package);
  app.get('/own', based.own);
  app.get('/crash', routes.crash);
  return app;
}

const basedRoutes: Record<string, () => unknown> = {
  '/shared': based.shared,
  '/package': based.package,
  '/own': based.own,
  '/crash': routes.crash,
};
async function fetchBased(request: Request): Promise<Response> {
  const path = new URL(request.url).pathname;
  try {
    const route = basedRoutes[path];
    if (route && request.method === 'GET') return Response.json(route());
    throw notFoundOrNotAllowed(request.method, path, route ? ['GET', 'HEAD'] : []);
  } catch (error) {
    return toProblemResponse(error, request, { typeBase: BASE });
  }
}

const basedApps: DoorApps = {
  hono: honoBased,
  express: expressBased,
  fastify: fastifyBased,
  fetch: () => fetchBased,
};
runDoors('problem-details with an adopter type base', baseCases, basedApps);

describe('problemTypeBase()', () => {
  it('refuses a base that is not an absolute URI ending in / in every door', () => {
    for (const make of [honoDoor.problemTypeBase, expressDoor.problemTypeBase, fastifyDoor.problemTypeBase]) {
      expect(() => make('api.example.com/problems/')).toThrow(TypeError);
      expect(() => make('https://api.example.com/problems')).toThrow(TypeError);
    }
  });
});
