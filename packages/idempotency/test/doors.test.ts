import {
  type DoorCase,
  listenFastify,
  listenFetch,
  listenHono,
  listenNode,
  runDoorSuite,
} from '@holdfast/node-bridge/testing';
import { problem, toProblemResponse } from '@holdfast/problem-details';
import * as problemsExpress from '@holdfast/problem-details/express';
import * as problemsFastify from '@holdfast/problem-details/fastify';
import { onProblem } from '@holdfast/problem-details/hono';
import { jsonBody } from '@holdfast/request-guards/hono';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import * as expressDoor from '../src/express';
import * as fastifyDoor from '../src/fastify';
import * as honoDoor from '../src/hono';
import { type HandlerResult, memoryIdempotencyStore, runIdempotent } from '../src/index';

// The route's behaviour, written once: each door's app gets its own counters and store, so the
// handler's run count shows through the answers (a replay carries the first run's number).
function behaviour() {
  let orders = 0;
  let flaky = 0;
  return {
    order(body: unknown): HandlerResult {
      const amount = (body as { amount?: unknown } | undefined)?.amount;
      if (typeof amount !== 'number' || amount < 0) {
        throw problem('unprocessable', { detail: 'amount must be a number, not negative.' });
      }
      orders += 1;
      return { status: 201, headers: { Location: `/orders/${orders}` }, body: { n: orders, amount } };
    },
    flaky(): HandlerResult {
      flaky += 1;
      if (flaky === 1) throw new Error('the first attempt crashes');
      return { status: 201, body: { attempt: flaky } };
    },
  };
}
const account = () => 'acct_1';
const quiet = { log: () => {} };
const post = (path: string, key: string | undefined, body: unknown) => ({
  method: 'POST',
  path,
  headers: key === undefined ? {} : { 'idempotency-key': key },
  body,
});

const cases: DoorCase[] = [
  {
    name: 'a first request runs the handler: 201',
    ...post('/orders', 'key-1', { amount: 10 }),
    expect: {
      status: 201,
      body: { n: 1, amount: 10 },
      headers: { location: '/orders/1', 'idempotent-replayed': null },
    },
  },
  {
    name: 'a repeat is replayed with Idempotent-Replayed, the handler not run',
    ...post('/orders', 'key-1', { amount: 10 }),
    expect: {
      status: 201,
      body: { n: 1, amount: 10 },
      headers: { location: '/orders/1', 'idempotent-replayed': 'true' },
    },
  },
  {
    name: 'the same key with another body: 422 idempotency_key_reused',
    ...post('/orders', 'key-1', { amount: 11 }),
    expect: { status: 422, code: 'idempotency_key_reused' },
  },
  {
    name: 'no key, none required: the handler simply runs',
    ...post('/orders', undefined, { amount: 5 }),
    expect: { status: 201, body: { n: 2 }, headers: { 'idempotent-replayed': null } },
  },
  {
    name: 'a malformed key: 400 validation_failed',
    ...post('/orders', 'x'.repeat(300), { amount: 5 }),
    expect: { status: 400, code: 'validation_failed' },
  },
  {
    name: 'a thrown 4xx problem is stored',
    ...post('/orders', 'key-2', { amount: -1 }),
    expect: { status: 422, code: 'unprocessable', headers: { 'idempotent-replayed': null } },
  },
  {
    name: 'and replayed',
    ...post('/orders', 'key-2', { amount: -1 }),
    expect: { status: 422, code: 'unprocessable', headers: { 'idempotent-replayed': 'true' } },
  },
  {
    name: 'a crash releases the key: 500, then the retry runs',
    ...post('/flaky', 'key-3', { amount: 1 }),
    before: [post('/flaky', 'key-3', { amount: 1 })],
    expect: { status: 201, body: { attempt: 2 }, headers: { 'idempotent-replayed': null } },
  },
  {
    name: 'required: no key is 400 idempotency_key_required',
    ...post('/required', undefined, { amount: 1 }),
    expect: { status: 400, code: 'idempotency_key_required' },
  },
];

const respond = (c: { json(body: unknown, status: 201): Response }, result: HandlerResult) =>
  new Response(JSON.stringify(result.body), {
    status: result.status,
    headers: { 'content-type': 'application/json', ...(result.headers ?? {}) },
  });

function honoApp(): Hono {
  const routes = behaviour();
  const store = memoryIdempotencyStore();
  const app = new Hono();
  app.onError(onProblem(quiet));
  app.use(jsonBody());
  app.post('/orders', honoDoor.idempotency({ store, account }), (c) =>
    respond(c, routes.order(c.get('jsonBody'))),
  );
  app.post('/flaky', honoDoor.idempotency({ store, account }), (c) => respond(c, routes.flaky()));
  app.post('/required', honoDoor.idempotency({ store, account, required: true }), (c) =>
    respond(c, routes.order(c.get('jsonBody'))),
  );
  return app;
}

function send(res: express.Response, result: HandlerResult): void {
  res
    .status(result.status)
    .set(result.headers ?? {})
    .json(result.body);
}

function expressApp(): express.Express {
  const routes = behaviour();
  const store = memoryIdempotencyStore();
  const app = express();
  app.use(express.json());
  app.post('/orders', expressDoor.idempotency({ store, account }), (req, res) =>
    send(res, routes.order(req.body)),
  );
  app.post('/flaky', expressDoor.idempotency({ store, account }), (_req, res) => send(res, routes.flaky()));
  app.post('/required', expressDoor.idempotency({ store, account, required: true }), (req, res) =>
    send(res, routes.order(req.body)),
  );
  app.use(problemsExpress.onProblem(quiet));
  return app;
}

function fastifyApp() {
  const routes = behaviour();
  const store = memoryIdempotencyStore();
  const app = Fastify();
  app.setErrorHandler(problemsFastify.onProblem(quiet));
  const reply = (target: import('fastify').FastifyReply, result: HandlerResult) =>
    target
      .code(result.status)
      .headers(Object.fromEntries(new Headers(result.headers)))
      .send(result.body);
  app.post('/orders', { ...fastifyDoor.idempotency({ store, account }) }, async (request, r) =>
    reply(r, routes.order(request.body)),
  );
  app.post('/flaky', { ...fastifyDoor.idempotency({ store, account }) }, async (_request, r) =>
    reply(r, routes.flaky()),
  );
  app.post(
    '/required',
    { ...fastifyDoor.idempotency({ store, account, required: true }) },
    async (request, r) => reply(r, routes.order(request.body)),
  );
  return app;
}

// A Fetch handler runs the core: runIdempotent with the parsed body.
function fetchHandler() {
  const routes = behaviour();
  const store = memoryIdempotencyStore();
  return async (request: Request): Promise<Response> => {
    const path = new URL(request.url).pathname;
    try {
      const text = await request.text();
      const body: unknown = text === '' ? undefined : JSON.parse(text);
      const idempotent = {
        key: request.headers.get('idempotency-key'),
        account: account(),
        method: request.method,
        path,
        body,
        required: path === '/required',
      };
      return await runIdempotent(store, idempotent, () =>
        path === '/flaky' ? routes.flaky() : routes.order(body),
      );
    } catch (error) {
      return toProblemResponse(error, request);
    }
  };
}

runDoorSuite('idempotency', cases, {
  hono: () => listenHono(honoApp()),
  express: () => listenNode(expressApp()),
  fastify: () => listenFastify(fastifyApp()),
  fetch: () => listenFetch(fetchHandler()),
});
