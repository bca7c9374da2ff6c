import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { Transaction } from '@holdfast/db';
import { migrate } from '@holdfast/db/migrate';
import { fromPg, pgTransaction as pgTransactionOf } from '@holdfast/db/pg';
import {
  type DoorCase,
  listenFastify,
  listenFetch,
  listenHono,
  listenNode,
  runDoorSuite,
} from '@holdfast/node-bridge/testing';
import { createTestDatabase, createTestPglite, realPostgres } from '@holdfast/pg/testing';
import { problem, toProblemResponse } from '@holdfast/problem-details';
import * as problemsExpress from '@holdfast/problem-details/express';
import * as problemsFastify from '@holdfast/problem-details/fastify';
import { onProblem } from '@holdfast/problem-details/hono';
import { jsonBody } from '@holdfast/request-guards/hono';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import pg from 'pg';
import { afterAll, beforeAll, describe } from 'vitest';
import * as expressDoor from '../src/express';
import * as fastifyDoor from '../src/fastify';
import * as honoDoor from '../src/hono';
import { type HandlerResult, idempotent, migrations } from '../src/index';

const quiet = { log: () => {} };
const post = (path: string, key: string | undefined, body: unknown) => ({
  method: 'POST',
  path,
  headers: key === undefined ? {} : { 'idempotency-key': key },
  body,
});

// The flow in the caller's own transaction on node-postgres: each door's withIdempotency, and
// idempotent() from a Fetch handler. Business rows
// go to door_orders, so a case can count them over HTTP (GET /stats); each door has its own
// account, so the doors share one database and still see the same state.

let pool: pg.Pool | undefined;
let closeDatabase: () => Promise<void> = async () => {};

beforeAll(async () => {
  if (realPostgres) {
    const db = await createTestDatabase();
    const url = new URL(process.env.DATABASE_URL ?? '');
    url.searchParams.set('options', `-c search_path=${db.schema}`);
    const opened = new pg.Pool({ connectionString: url.toString(), max: 8 });
    pool = opened;
    closeDatabase = async () => {
      await opened.end();
      await db.close();
    };
  } else {
    // A PGlite of this file's own on a loopback socket that pg speaks to: one session, so one
    // connection, and the requests of a race queue for it instead of overlapping.
    const engine = await createTestPglite();
    const server = new PGLiteSocketServer({ db: engine, host: '127.0.0.1', port: 0 });
    await server.start();
    const [host, port] = server.getServerConn().split(':');
    const opened = new pg.Pool({ host, port: Number(port), user: 'postgres', database: 'postgres', max: 1 });
    pool = opened;
    closeDatabase = async () => {
      await opened.end();
      await server.stop();
      await engine.close();
    };
  }
  await migrate(fromPg(pool), migrations());
  await pool.query(
    'create table door_orders (id bigserial primary key, account text not null, amount int not null)',
  );
});

afterAll(async () => {
  await closeDatabase();
});

function database(): pg.Pool {
  if (pool === undefined) throw new Error('the database did not open');
  return pool;
}

/** One node-postgres transaction, from @holdfast/db/pg: what `{ transaction }` takes. */
const pgTransaction: Transaction<pg.PoolClient> = (work) => pgTransactionOf(database())(work);

// The routes' behaviour on pg, written once; `runs` counts the order handler's runs, so a
// replay shows the first run's number and a race shows one run.
function transactionalBehaviour(account: string) {
  let runs = 0;
  let flaky = 0;
  let unavailable = 0;
  const insert = (client: pg.PoolClient, amount: number) =>
    client.query('insert into door_orders (account, amount) values ($1, $2)', [account, amount]);
  return {
    account,
    async order(client: pg.PoolClient, body: unknown): Promise<HandlerResult> {
      const amount = (body as { amount?: unknown } | undefined)?.amount;
      if (typeof amount !== 'number') throw problem('unprocessable', { detail: 'amount must be a number.' });
      runs += 1;
      await insert(client, amount);
      return { status: 201, headers: { Location: `/orders/${runs}` }, body: { runs, amount } };
    },
    // Writes, then crashes on its first attempt: the write must roll back with the claim.
    async flaky(client: pg.PoolClient): Promise<HandlerResult> {
      flaky += 1;
      await insert(client, 30);
      if (flaky === 1) throw new Error('the first attempt crashes after its write');
      return { status: 201, body: { attempt: flaky } };
    },
    // Writes, then answers 503 on its first attempt: a 5xx answer rolls back like a throw.
    async unavailable(client: pg.PoolClient): Promise<HandlerResult> {
      unavailable += 1;
      await insert(client, 40);
      if (unavailable === 1) return { status: 503, body: { attempt: unavailable } };
      return { status: 201, body: { attempt: unavailable } };
    },
    async stats(): Promise<{ orders: number; runs: number }> {
      const { rows } = await database().query<{ n: number }>(
        'select count(*)::int as n from door_orders where account = $1',
        [account],
      );
      return { orders: rows[0]?.n ?? 0, runs };
    },
  };
}

const race = post('/orders', 'key-race', { amount: 20 });

const transactionCases: DoorCase[] = [
  {
    name: 'a first request runs the handler in the transaction: 201',
    ...post('/orders', 'key-1', { amount: 10 }),
    expect: {
      status: 201,
      body: { runs: 1, amount: 10 },
      headers: { location: '/orders/1', 'idempotent-replayed': null },
    },
  },
  {
    name: 'a repeat replays the stored answer with Idempotent-Replayed, the handler not run',
    ...post('/orders', 'key-1', { amount: 10 }),
    expect: {
      status: 201,
      body: { runs: 1, amount: 10 },
      headers: { location: '/orders/1', 'idempotent-replayed': 'true' },
    },
  },
  {
    name: 'the same key with another body: 422 idempotency_key_reused',
    ...post('/orders', 'key-1', { amount: 11 }),
    expect: { status: 422, code: 'idempotency_key_reused' },
  },
  {
    name: 'a thrown 4xx problem is rendered and rolls back: nothing is stored under the key',
    together: { requests: [post('/orders', 'key-bad', { amount: 'x' })], statuses: [422] },
    ...post('/orders', 'key-bad', { amount: 'x' }),
    expect: { status: 422, code: 'unprocessable', headers: { 'idempotent-replayed': null } },
  },
  {
    name: 'required: no key is 400 idempotency_key_required',
    ...post('/orders', undefined, { amount: 1 }),
    expect: { status: 400, code: 'idempotency_key_required' },
  },
  {
    // At once, a repeat answers 409 while the first runs (idempotent.test.ts races them).
    name: 'five requests with one key: each gets 201, the handler ran once, one row written',
    before: [race, race, race, race, race],
    method: 'GET',
    path: '/stats',
    expect: { status: 200, body: { orders: 2, runs: 2 } },
  },
  {
    name: 'and a later repeat of the race replays its one answer',
    ...race,
    expect: { status: 201, body: { runs: 2, amount: 20 }, headers: { 'idempotent-replayed': 'true' } },
  },
  {
    name: 'a throw after the write: 500, the write rolled back, the key free for the retry',
    together: { requests: [post('/flaky', 'key-flaky', {})], statuses: [500] },
    ...post('/flaky', 'key-flaky', {}),
    expect: { status: 201, body: { attempt: 2 }, headers: { 'idempotent-replayed': null } },
  },
  {
    name: 'a 5xx answer after the write: returned, the write rolled back, the key free for the retry',
    together: { requests: [post('/unavailable', 'key-503', {})], statuses: [503] },
    ...post('/unavailable', 'key-503', {}),
    expect: { status: 201, body: { attempt: 2 }, headers: { 'idempotent-replayed': null } },
  },
  {
    name: 'only the committed attempts left rows: key-1, the race, and one of each retried route',
    method: 'GET',
    path: '/stats',
    expect: { status: 200, body: { orders: 4, runs: 2 } },
  },
];

function honoTransactionApp(door: string): Hono {
  const routes = transactionalBehaviour(`acct_${door}`);
  const options = { transaction: pgTransaction, account: routes.account, required: true };
  const app = new Hono();
  app.onError(onProblem(quiet));
  app.use(jsonBody());
  app.post('/orders', (c) =>
    honoDoor.withIdempotency(c, options, (client) => routes.order(client, c.get('jsonBody'))),
  );
  app.post('/flaky', (c) => honoDoor.withIdempotency(c, options, (client) => routes.flaky(client)));
  app.post('/unavailable', (c) =>
    honoDoor.withIdempotency(c, options, (client) => routes.unavailable(client)),
  );
  app.get('/stats', async (c) => c.json(await routes.stats()));
  return app;
}

function expressTransactionApp(door: string): express.Express {
  const routes = transactionalBehaviour(`acct_${door}`);
  const options = { transaction: pgTransaction, account: routes.account, required: true };
  const app = express();
  app.use(express.json());
  app.post('/orders', (req, res) =>
    expressDoor.withIdempotency(req, res, options, (client) => routes.order(client, req.body)),
  );
  app.post('/flaky', (req, res) =>
    expressDoor.withIdempotency(req, res, options, (client) => routes.flaky(client)),
  );
  app.post('/unavailable', (req, res) =>
    expressDoor.withIdempotency(req, res, options, (client) => routes.unavailable(client)),
  );
  app.get('/stats', async (_req, res) => {
    res.json(await routes.stats());
  });
  app.use(problemsExpress.onProblem(quiet));
  return app;
}

function fastifyTransactionApp(door: string) {
  const routes = transactionalBehaviour(`acct_${door}`);
  const options = { transaction: pgTransaction, account: routes.account, required: true };
  const app = Fastify();
  app.setErrorHandler(problemsFastify.onProblem(quiet));
  app.post('/orders', async (request, reply) =>
    reply.send(
      await fastifyDoor.withIdempotency(request, options, (client) => routes.order(client, request.body)),
    ),
  );
  app.post('/flaky', async (request, reply) =>
    reply.send(await fastifyDoor.withIdempotency(request, options, (client) => routes.flaky(client))),
  );
  app.post('/unavailable', async (request, reply) =>
    reply.send(await fastifyDoor.withIdempotency(request, options, (client) => routes.unavailable(client))),
  );
  app.get('/stats', async () => routes.stats());
  return app;
}

// A Fetch handler calls the core: idempotent() with the parsed body.
function fetchTransactionHandler(door: string) {
  const routes = transactionalBehaviour(`acct_${door}`);
  return async (request: Request): Promise<Response> => {
    const path = new URL(request.url).pathname;
    try {
      if (path === '/stats') return Response.json(await routes.stats());
      const text = await request.text();
      const body: unknown = text === '' ? undefined : JSON.parse(text);
      const request_ = {
        key: request.headers.get('idempotency-key'),
        account: routes.account,
        method: request.method,
        path,
        body,
        required: true,
      };
      return await idempotent(pgTransaction, request_, (client) =>
        path === '/flaky'
          ? routes.flaky(client)
          : path === '/unavailable'
            ? routes.unavailable(client)
            : routes.order(client, body),
      );
    } catch (error) {
      return toProblemResponse(error, request);
    }
  };
}

describe(`in the caller's transaction: ${realPostgres ? 'PostgreSQL' : 'PGlite, one connection (races queue)'}`, () => {
  runDoorSuite('idempotency on node-postgres', transactionCases, {
    hono: () => listenHono(honoTransactionApp('hono')),
    express: () => listenNode(expressTransactionApp('express')),
    fastify: () => listenFastify(fastifyTransactionApp('fastify')),
    fetch: () => listenFetch(fetchTransactionHandler('fetch')),
  });
});
