import { type DoorCase, runDoors } from '@holdfast/doors-test';
import { problem, toProblemResponse } from '@holdfast/problem-details';
import * as problemsExpress from '@holdfast/problem-details/express';
import * as problemsFastify from '@holdfast/problem-details/fastify';
import { onProblem } from '@holdfast/problem-details/hono';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import * as expressDoor from '../src/express';
import * as fastifyDoor from '../src/fastify';
import * as honoDoor from '../src/hono';
import { applyRateLimitHeaders, rateLimiter } from '../src/index';

// Two requests per client, then one a minute: each door gets its own limiter (fresh buckets).
const limiterOf = () => rateLimiter({ limit: 1, windowMs: 60_000, burst: 2 });
const clientOf = (value: string | undefined) => value ?? 'anonymous';
const conflict = () => {
  throw problem('version_conflict', { detail: 'ETag mismatch.' });
};
const quiet = { log: () => {} };
const as = (client: string) => ({ 'x-client': client });
const POLICY = '"default";q=2;w=120';

const cases: DoorCase[] = [
  {
    name: 'an admitted request carries RateLimit and RateLimit-Policy',
    path: '/ping',
    headers: as('a'),
    expect: {
      status: 200,
      body: { ok: true },
      headers: { ratelimit: /^"default";r=1;t=\d+$/, 'ratelimit-policy': POLICY },
    },
  },
  {
    name: 'the last token of the burst',
    path: '/ping',
    headers: as('a'),
    expect: { status: 200, headers: { ratelimit: /^"default";r=0;t=\d+$/ } },
  },
  {
    name: 'an empty bucket is 429 rate_limited with Retry-After',
    path: '/ping',
    headers: as('a'),
    expect: {
      status: 429,
      code: 'rate_limited',
      headers: { 'retry-after': '60', ratelimit: '"default";r=0;t=60', 'ratelimit-policy': POLICY },
      body: { detail: 'This client may make 1 requests per 60 s (burst 2).' },
    },
  },
  {
    name: 'another client has its own bucket',
    path: '/ping',
    headers: as('b'),
    expect: { status: 200, headers: { ratelimit: /^"default";r=1;/ } },
  },
  {
    name: 'a problem raised after admission keeps the headers',
    path: '/conflict',
    headers: as('c'),
    expect: {
      status: 409,
      code: 'version_conflict',
      headers: { ratelimit: /^"default";r=1;/, 'ratelimit-policy': POLICY },
    },
  },
];

function honoApp(): Hono {
  const app = new Hono();
  app.onError(onProblem(quiet));
  app.use(honoDoor.rateLimit(limiterOf(), (c) => clientOf(c.req.header('x-client'))));
  app.get('/ping', (c) => c.json({ ok: true }));
  app.get('/conflict', conflict);
  return app;
}

function expressApp(): express.Express {
  const app = express();
  app.use(expressDoor.rateLimit(limiterOf(), (req) => clientOf(req.get('x-client'))));
  app.get('/ping', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/conflict', conflict);
  app.use(problemsExpress.onProblem(quiet));
  return app;
}

function fastifyApp() {
  const app = Fastify();
  app.setErrorHandler(problemsFastify.onProblem(quiet));
  const header = (value: string | string[] | undefined) => (typeof value === 'string' ? value : undefined);
  app.addHook(
    'onRequest',
    fastifyDoor.rateLimit(limiterOf(), (request) => clientOf(header(request.headers['x-client']))),
  );
  app.get('/ping', async () => ({ ok: true }));
  app.get('/conflict', conflict);
  return app;
}

function fetchHandler() {
  const limiter = limiterOf();
  return async (request: Request): Promise<Response> => {
    const headers = await limiter.take(clientOf(request.headers.get('x-client') ?? undefined));
    let response: Response;
    try {
      if (new URL(request.url).pathname === '/conflict') conflict();
      response = Response.json({ ok: true });
    } catch (error) {
      response = toProblemResponse(error, request);
    }
    applyRateLimitHeaders(response.headers, headers);
    return response;
  };
}

runDoors('rate-limit', cases, {
  hono: honoApp,
  express: expressApp,
  fastify: fastifyApp,
  fetch: fetchHandler,
});
