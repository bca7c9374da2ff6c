import { migrate } from '@holdfast/db/migrate';
import { fromPostgres } from '@holdfast/db/postgres';
import { toRequest, writeResponse } from '@holdfast/node-bridge';
import { rawHttp } from '@holdfast/node-bridge/raw-http';
import {
  type DoorCase,
  type DoorName,
  listenFastify,
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
  {
    name: 'from an allowed source range: 204',
    ...post(ORDER, { id: 'msg_8' }, 'local'),
    expect: { status: 204, text: '' },
  },
  {
    name: 'from outside the allowed source ranges: 403 webhook_source_forbidden',
    ...post(ORDER, { id: 'msg_9' }, 'guarded'),
    expect: { status: 403, code: 'webhook_source_forbidden', body: { instance: '/hooks/guarded' } },
  },
];

// Receivers and the source ranges they accept (every request of the suite comes from 127.0.0.1).
const SOURCES: Record<string, readonly string[] | undefined> = {
  orders: undefined,
  local: ['127.0.0.0/8', '::1/128'],
  guarded: ['203.0.113.0/24', '2001:db8::/32'],
  narrow: ['127.0.0.3/32'],
};
/** Source refusals each door reported through `onSourceForbidden`, with the address judged. */
const forbidden: Record<DoorName, (string | undefined)[]> = { hono: [], express: [], fastify: [], fetch: [] };

let db: TestDatabase;
let inbox: PostgresInbox;
beforeAll(async () => {
  db = await createTestDatabase({ max: 2 });
  await migrate(fromPostgres(db.sql), migrations());
  inbox = postgresInbox(fromPostgres(db.sql), { now: () => T * 1000 });
});
afterAll(async () => {
  await db?.close();
});

// The options every door gets, its hooks given the door's own request type.
function optionsFor<C>(door: DoorName, nameOf: (c: C) => string | undefined): WebhookHandlerOptions<C> {
  return {
    secrets: (c) => (Object.hasOwn(SOURCES, nameOf(c) ?? '') ? [secret] : undefined),
    allowedSources: (c) => SOURCES[nameOf(c) ?? ''],
    onSourceForbidden: (_c, address) => void forbidden[door].push(address),
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

// A Fetch handler knows no socket: its caller passes the client address along (here the Node
// peer; Deno's info.remoteAddr, Bun's server.requestIP).
interface FetchCall {
  request: Request;
  address: string | undefined;
}
function fetchHandler() {
  const receive = webhookHandler<FetchCall>({
    ...optionsFor<FetchCall>(
      'fetch',
      ({ request }) => /^\/hooks\/([^/]+)$/.exec(new URL(request.url).pathname)?.[1],
    ),
    clientAddress: (call) => call.address,
  });
  return listenNode((req, res) => {
    const request = toRequest(req, { res });
    void receive(request, { request, address: req.socket.remoteAddress }).then((response) =>
      writeResponse(res, response),
    );
  });
}

const doors = {
  hono: () => listenHono(honoApp()),
  express: () => listenNode(expressApp()),
  fastify: () => listenFastify(fastifyApp()),
  fetch: () => fetchHandler(),
};
runDoorSuite('webhook-verifier', cases, doors);

describe.each(Object.keys(doors) as DoorName[])('the source check through the %s door', (door) => {
  let running: Awaited<ReturnType<(typeof doors)[DoorName]>>;
  const port = () => Number(new URL(running.url).port);
  beforeAll(async () => {
    running = await doors[door]();
  });
  afterAll(() => running.close());

  it('answers 403 before the body is read: the body never finishes, the answer comes anyway', async () => {
    const before = forbidden[door].length;
    const conversation = await rawHttp(port).open('127.0.0.1');
    const headers = signed(ORDER, { id: 'msg_slow' });
    const head = [
      'POST /hooks/guarded HTTP/1.1',
      'Host: 127.0.0.1',
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
      'Content-Length: 100000',
      '',
      '',
    ].join('\r\n');
    // A tenth of the body, then nothing: a receiver that waited for it would never answer.
    conversation.socket.write(head + ORDER.slice(0, 10));
    const answer = await conversation.waitFor(/webhook_source_forbidden/);
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(answer).toMatch(/content-type: application\/problem\+json/i);
    conversation.socket.destroy();
    // Counted like a bad signature, with the address it judged.
    expect(forbidden[door].slice(before)).toEqual(['127.0.0.1']);
  });

  it('judges the exact client address: 127.0.0.3 passes a /32 of it, 127.0.0.2 does not', async () => {
    const exchange = async (from: string, id: string) => {
      const conversation = await rawHttp(port).open(from);
      const headers = signed(ORDER, { id: `${id}_${door}` });
      conversation.socket.write(
        [
          'POST /hooks/narrow HTTP/1.1',
          'Host: 127.0.0.1',
          'Connection: close',
          ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
          `Content-Length: ${Buffer.byteLength(ORDER)}`,
          '',
          ORDER,
        ].join('\r\n'),
      );
      const text = await conversation.waitFor(/^HTTP\/1\.1 \d{3} /);
      conversation.socket.destroy();
      return text;
    };
    expect(await exchange('127.0.0.3', 'msg_narrow')).toMatch(/^HTTP\/1\.1 204 /);
    expect(await exchange('127.0.0.2', 'msg_narrow_other')).toMatch(/^HTTP\/1\.1 403 /);
  });
});

describe('the durable inbox behind every door', () => {
  it('holds each door’s accepted event once, with its exact bytes', async () => {
    const rows = await db.sql<{ scope: string; body: Uint8Array }[]>`
      select scope, body from holdfast_webhook_inbox order by scope`;
    const scopes = [...new Set(rows.map((row) => row.scope))];
    expect(scopes).toEqual(['express', 'fastify', 'fetch', 'hono']);
    for (const row of rows) expect(new TextDecoder().decode(row.body)).toBe(ORDER);
  });
});
