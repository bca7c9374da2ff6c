import {
  type DoorCase,
  type DoorName,
  listenFastify,
  listenFetch,
  listenHono,
  listenNode,
  runDoorSuite,
} from '@holdfast/node-bridge/testing';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { createSigner, generateSecret } from '@holdfast/webhook-signer';
import express from 'express';
import Fastify from 'fastify';
import { type Context, Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as expressDoor from '../src/express';
import * as fastifyDoor from '../src/fastify';
import * as honoDoor from '../src/hono';
import { migrations, type PostgresInbox, postgresInbox } from '../src/postgres';
import { type WebhookEvent, type WebhookHandlerOptions, webhookHandler } from '../src/receiver';

// One receiver behaviour through every door, handing events to the durable inbox on PostgreSQL
// (PGlite without DATABASE_URL). Each door is its own inbox scope, so the same ids are new to it.

const T = 1_700_000_000;
const secret = generateSecret();
const signer = createSigner({ secrets: secret });
// Odd spacing: only the exact bytes verify, and the inbox must keep them.
const ORDER = '{"type": "order.created",  "data": {"id": "ord_1"}}';

function signed(
  body: string,
  init: { id?: string; ts?: number; signature?: string } = {},
): Record<string, string> {
  const headers: Record<string, string> = {
    ...signer.headers({ id: init.id ?? 'msg_1', timestamp: init.ts ?? T, body }),
    'content-type': 'application/json',
  };
  if (init.signature) headers['webhook-signature'] = init.signature;
  return headers;
}
const post = (body: string, init: Parameters<typeof signed>[1] = {}, name = 'orders') => ({
  method: 'POST',
  path: `/hooks/${name}`,
  headers: signed(body, init),
  body,
});

const cases: DoorCase[] = [
  { name: 'a verified event is handed to the inbox: 204', ...post(ORDER), expect: { status: 204, text: '' } },
  { name: 'the same id again is a duplicate: 200', ...post(ORDER), expect: { status: 200, text: '' } },
  {
    name: 'an unknown type is acknowledged and not handed off: 200',
    ...post('{"type":"other.thing"}', { id: 'msg_2' }),
    expect: { status: 200 },
  },
  {
    name: 'a bad signature: 401 webhook_signature_invalid',
    ...post(ORDER, { id: 'msg_3', signature: 'v1,AAAA' }),
    expect: { status: 401, code: 'webhook_signature_invalid', body: { instance: '/hooks/orders' } },
  },
  {
    name: 'a stale timestamp: 400 webhook_timestamp_out_of_window',
    ...post(ORDER, { id: 'msg_4', ts: T - 1000 }),
    expect: { status: 400, code: 'webhook_timestamp_out_of_window' },
  },
  {
    name: 'signed bytes that are not JSON: 400 invalid_json',
    ...post('{not json', { id: 'msg_5' }),
    expect: { status: 400, code: 'invalid_json' },
  },
  {
    name: 'a body over maxBytes: 413 payload_too_large',
    ...post(JSON.stringify({ type: 'order.created', pad: 'x'.repeat(3000) }), { id: 'msg_6' }),
    expect: { status: 413, code: 'payload_too_large' },
  },
  {
    name: 'a webhook-id over maxIdLength: 400 validation_failed',
    ...post(ORDER, { id: `msg_${'x'.repeat(80)}` }),
    expect: { status: 400, code: 'validation_failed', body: { errors: [{ field: 'webhook-id' }] } },
  },
  {
    name: 'an unknown receiver: 404 not_found',
    ...post(ORDER, { id: 'msg_7' }, 'nobody'),
    expect: { status: 404, code: 'not_found' },
  },
];

let db: TestDatabase;
let inbox: PostgresInbox;
beforeAll(async () => {
  db = await createTestDatabase({ max: 2 });
  for (const migration of migrations) await db.sql.unsafe(migration.sql);
  inbox = postgresInbox(db.sql, { now: () => T * 1000 });
});
afterAll(async () => {
  await db?.close();
});

// The options every door gets, its hooks given the door's own request type.
function optionsFor<C>(door: DoorName, nameOf: (c: C) => string | undefined): WebhookHandlerOptions<C> {
  return {
    secrets: (c) => (nameOf(c) === 'orders' ? [secret] : undefined),
    onEvent: (event: WebhookEvent) => inbox.enqueue(event, { scope: door }),
    scope: () => door,
    types: ['order.created'],
    maxBytes: 2048,
    maxIdLength: 64,
    now: () => T * 1000,
  };
}

function honoApp(): Hono {
  const app = new Hono();
  app.post('/hooks/:name', honoDoor.webhookReceiver(optionsFor<Context>('hono', (c) => c.req.param('name'))));
  return app;
}

function expressApp(): express.Express {
  const app = express();
  // The receiver is registered before express.json(): it reads the exact bytes itself.
  app.post(
    '/hooks/:name',
    expressDoor.webhookReceiver(optionsFor('express', (req) => String(req.params.name))),
  );
  app.use(express.json());
  return app;
}

function fastifyApp() {
  const app = Fastify();
  void app.register(async (hooks) => {
    fastifyDoor.rawBodies(hooks);
    hooks.post(
      '/hooks/:name',
      fastifyDoor.webhookReceiver(
        optionsFor('fastify', (request) => (request.params as { name?: string }).name),
      ),
    );
  });
  return app;
}

function fetchHandler() {
  const receive = webhookHandler<Request>(
    optionsFor('fetch', (request) => /^\/hooks\/([^/]+)$/.exec(new URL(request.url).pathname)?.[1]),
  );
  return (request: Request) => receive(request, request);
}

runDoorSuite('webhook-verifier', cases, {
  hono: () => listenHono(honoApp()),
  express: () => listenNode(expressApp()),
  fastify: () => listenFastify(fastifyApp()),
  fetch: () => listenFetch(fetchHandler()),
});

describe('the durable inbox behind every door', () => {
  it('holds each door’s accepted event once, with its exact bytes', async () => {
    const rows = await db.sql<{ scope: string; body: Uint8Array }[]>`
      select scope, body from holdfast_webhook_inbox order by scope`;
    expect(rows.map((row) => row.scope)).toEqual(['express', 'fastify', 'fetch', 'hono']);
    for (const row of rows) expect(new TextDecoder().decode(row.body)).toBe(ORDER);
  });
});
