import { type DoorCase, runDoors } from '@holdfast/doors-test';
import { problem } from '@holdfast/problem-details';
import * as problemsExpress from '@holdfast/problem-details/express';
import * as problemsFastify from '@holdfast/problem-details/fastify';
import { onProblem } from '@holdfast/problem-details/hono';
import express from 'express';
import Fastify from 'fastify';
import { type Context, Hono } from 'hono';
import * as expressDoor from '../src/express';
import * as fastifyDoor from '../src/fastify';
import * as honoDoor from '../src/hono';
import {
  type ApiKeyStore,
  apiKeyAuthenticator,
  type FailureLimit,
  hasScope,
  insufficientScope,
  memoryApiKeyStore,
  type Principal,
} from '../src/index';
import { generateKey } from '../src/key';

const READ = generateKey();
const WRITE = generateKey();
const LIVE = generateKey('live');
const UNKNOWN = generateKey();

async function storeOf(): Promise<ApiKeyStore> {
  const store = memoryApiKeyStore();
  await store.save({ key: READ, account: 'acct_1', scopes: ['orders:read'] });
  await store.save({ key: WRITE, account: 'acct_1', scopes: ['orders:write'] });
  await store.save({ key: LIVE, account: 'acct_1', scopes: ['*'] });
  return store;
}

// Three failed attempts per client, then 429 before any lookup (a counter, as a token bucket would be).
function failuresBy<C>(clientOf: (c: C) => string): FailureLimit<C> {
  const spent = new Map<string, number>();
  return {
    async check(c) {
      if ((spent.get(clientOf(c)) ?? 0) >= 3) throw problem('rate_limited', { retryAfter: 30 });
    },
    async spend(c) {
      spent.set(clientOf(c), (spent.get(clientOf(c)) ?? 0) + 1);
    },
  };
}
const options = { realm: 'test' } as const;
const bearer = (key: string, client = 'a') => ({ authorization: `Bearer ${key}`, 'x-client': client });
const view = (principal: Principal | undefined) => ({
  account: principal?.account,
  livemode: principal?.livemode,
});
const quiet = { log: () => {} };
const CHALLENGE = 'Bearer realm="test"';

const cases: DoorCase[] = [
  {
    name: 'no credentials: 401 with a bare challenge',
    path: '/orders',
    expect: { status: 401, code: 'unauthenticated', headers: { 'www-authenticate': CHALLENGE } },
  },
  {
    name: 'not a bearer key: 401 invalid_token',
    path: '/orders',
    headers: { authorization: 'Basic dXNlcjpwYXNz' },
    expect: {
      status: 401,
      code: 'unauthenticated',
      headers: { 'www-authenticate': `${CHALLENGE}, error="invalid_token"` },
    },
  },
  {
    name: 'an unknown key: 401 invalid_token',
    path: '/orders',
    headers: bearer(UNKNOWN),
    expect: {
      status: 401,
      code: 'unauthenticated',
      body: { detail: 'The API key is not valid.' },
      headers: { 'www-authenticate': `${CHALLENGE}, error="invalid_token"` },
    },
  },
  {
    name: 'a test key resolves to its account',
    path: '/orders',
    headers: bearer(READ),
    expect: { status: 200, body: { account: 'acct_1', livemode: false } },
  },
  {
    name: 'a live key resolves to the live tenant',
    path: '/orders',
    headers: bearer(LIVE),
    expect: { status: 200, body: { account: 'acct_1:live', livemode: true } },
  },
  {
    name: 'a key without the scope: 403 insufficient_scope',
    method: 'POST',
    path: '/orders',
    headers: bearer(READ),
    expect: {
      status: 403,
      code: 'forbidden',
      headers: { 'www-authenticate': `${CHALLENGE}, error="insufficient_scope", scope="orders:write"` },
    },
  },
  {
    name: 'orders:write may write (and read)',
    method: 'POST',
    path: '/orders',
    headers: bearer(WRITE),
    expect: { status: 201, body: { account: 'acct_1' } },
  },
  {
    name: 'a client out of failed attempts is 429 before any lookup',
    path: '/orders',
    headers: bearer(UNKNOWN, 'x'),
    before: [1, 2, 3].map(() => ({ path: '/orders', headers: bearer(UNKNOWN, 'x') })),
    expect: { status: 429, code: 'rate_limited', headers: { 'retry-after': '30' } },
  },
  {
    name: 'a known key never spends nor is refused by the failure limit',
    path: '/orders',
    headers: bearer(READ, 'x'),
    expect: { status: 200, body: { account: 'acct_1' } },
  },
];

async function honoApp(): Promise<Hono<honoDoor.ApiKeyEnv>> {
  const app = new Hono<honoDoor.ApiKeyEnv>();
  app.onError(onProblem(quiet));
  const failures = failuresBy<Context>((c) => c.req.header('x-client') ?? '');
  app.use(honoDoor.apiKeyAuth({ store: await storeOf(), ...options, failures }));
  app.get('/orders', honoDoor.requireScope('orders:read', options), (c) => c.json(view(c.get('principal'))));
  app.post('/orders', honoDoor.requireScope('orders:write', options), (c) =>
    c.json(view(c.get('principal')), 201),
  );
  return app;
}

async function expressApp(): Promise<express.Express> {
  const app = express();
  const failures = failuresBy<express.Request>((req) => req.get('x-client') ?? '');
  app.use(expressDoor.apiKeyAuth({ store: await storeOf(), ...options, failures }));
  app.get('/orders', expressDoor.requireScope('orders:read', options), (req, res) => {
    res.json(view(req.principal));
  });
  app.post('/orders', expressDoor.requireScope('orders:write', options), (req, res) => {
    res.status(201).json(view(req.principal));
  });
  app.use(problemsExpress.onProblem(quiet));
  return app;
}

async function fastifyApp() {
  const app = Fastify();
  app.setErrorHandler(problemsFastify.onProblem(quiet));
  const failures = failuresBy<{ headers: Record<string, unknown> }>((request) =>
    String(request.headers['x-client'] ?? ''),
  );
  app.addHook('onRequest', fastifyDoor.apiKeyAuth({ store: await storeOf(), ...options, failures }));
  app.get('/orders', { preHandler: fastifyDoor.requireScope('orders:read', options) }, async (request) =>
    view(request.principal),
  );
  app.post(
    '/orders',
    { preHandler: fastifyDoor.requireScope('orders:write', options) },
    async (request, reply) => reply.code(201).send(view(request.principal)),
  );
  return app;
}

// A Fetch handler authenticates with the core and checks scopes itself.
async function fetchHandler() {
  const authenticate = apiKeyAuthenticator<Request>({
    store: await storeOf(),
    ...options,
    failures: failuresBy((request) => request.headers.get('x-client') ?? ''),
  });
  return async (request: Request): Promise<Response> => {
    const principal = await authenticate(request.headers.get('authorization') ?? undefined, request);
    const scope = request.method === 'POST' ? 'orders:write' : 'orders:read';
    if (!hasScope(principal, scope)) throw insufficientScope(scope, options);
    return Response.json(view(principal), { status: request.method === 'POST' ? 201 : 200 });
  };
}

runDoors('api-keys', cases, { hono: honoApp, express: expressApp, fastify: fastifyApp, fetch: fetchHandler });
