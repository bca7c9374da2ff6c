import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { createSigner, generateSecret } from '@holdfast/webhook-signer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiverApp, type ReceiverApp } from '../src/app';
import { migrate } from '../src/migrations';

// The verifier's clock, fixed: timestamps are signed relative to it, so "stale" is exact.
const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
const NOW_SECONDS = NOW / 1000;
const secret = generateSecret();
const signer = createSigner({ secrets: secret });
const logged: string[] = [];

let db: TestDatabase;
let receiver: ReceiverApp;
let server: Server;
let base: string;

beforeAll(async () => {
  db = await createTestDatabase();
  await migrate(db.sql);
  receiver = createReceiverApp({
    sql: db.sql,
    receivers: new Map([['shop', [secret]]]),
    now: () => NOW,
    log: (message) => logged.push(message),
  });
  server = receiver.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await db.close();
});

interface Delivery {
  id: string;
  payload: unknown;
  timestamp?: number;
  /** Sent instead of the signed body (a forgery). */
  sentBody?: string;
  path?: string;
}

function deliver({ id, payload, timestamp = NOW_SECONDS, sentBody, path = '/hooks/shop' }: Delivery) {
  const body = JSON.stringify(payload);
  const headers = signer.headers({ id, timestamp, body });
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: sentBody ?? body,
  });
}

function orderEvent(type: string, sequence: number, order: { id: string; status: string; total: number }) {
  return { type, sequence, createdAt: new Date(NOW).toISOString(), data: { object: order } };
}

async function inboxRows(webhookId: string) {
  return db.sql<{ scope: string; status: string; type: string | null }[]>`
    select scope, status, type from holdfast_webhook_inbox where webhook_id = ${webhookId}`;
}

async function expectProblem(response: Response, status: number, code: string): Promise<void> {
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = (await response.json()) as { code?: string; status?: number; type?: string };
  expect(body.code).toBe(code);
  expect(body.status).toBe(status);
  expect(response.status).toBe(status);
}

describe('the Express receiver over HTTP', () => {
  it('acknowledges a valid delivery with 204 and stores it in the inbox once, a duplicate webhook-id with 200', async () => {
    const event = orderEvent('order.created', 1, { id: 'ord_1', status: 'pending', total: 4200 });
    const first = await deliver({ id: 'msg_created_1', payload: event });
    expect(first.status).toBe(204);
    // The sender retries the same id, signed afresh a minute later: acknowledged, not stored again.
    const again = await deliver({ id: 'msg_created_1', payload: event, timestamp: NOW_SECONDS + 60 });
    expect(again.status).toBe(200);
    const rows = await inboxRows('msg_created_1');
    expect(rows).toEqual([{ scope: 'shop', status: 'pending', type: 'order.created' }]);
  });

  it('processes inbox entries after the answer: the order lands once, a late older version is discarded as stale', async () => {
    const updated = orderEvent('order.updated', 3, { id: 'ord_2', status: 'shipped', total: 900 });
    const late = orderEvent('order.updated', 2, { id: 'ord_2', status: 'paid', total: 900 });
    expect((await deliver({ id: 'msg_ord2_v3', payload: updated })).status).toBe(204);
    expect((await deliver({ id: 'msg_ord2_v2', payload: late })).status).toBe(204);
    // Not a type this service processes: acknowledged, stored, marked ignored.
    expect((await deliver({ id: 'msg_refund', payload: { type: 'refund.created', data: {} } })).status).toBe(
      204,
    );

    // Everything due, the first test's entry included.
    expect(await receiver.processInbox()).toBe(4);
    expect(await receiver.processInbox()).toBe(0);

    const statuses = await db.sql<{ webhook_id: string; status: string }[]>`
      select webhook_id, status from holdfast_webhook_inbox order by webhook_id`;
    expect(statuses).toEqual([
      { webhook_id: 'msg_created_1', status: 'processed' },
      { webhook_id: 'msg_ord2_v2', status: 'stale' },
      { webhook_id: 'msg_ord2_v3', status: 'processed' },
      { webhook_id: 'msg_refund', status: 'ignored' },
    ]);
    const order = await fetch(`${base}/orders/ord_2`);
    expect(order.status).toBe(200);
    expect(await order.json()).toEqual({ id: 'ord_2', status: 'shipped', total: 900 });
    const orders = await db.sql`select id from received_orders order by id`;
    expect(orders.map((row) => row.id)).toEqual(['ord_1', 'ord_2']);
    expect(logged).toEqual([]);
  });

  it('refuses a bad signature with 401 problem+json and stores nothing', async () => {
    const event = orderEvent('order.created', 1, { id: 'ord_3', status: 'pending', total: 100 });
    const forged = await deliver({
      id: 'msg_forged',
      payload: event,
      sentBody: JSON.stringify({ ...event, data: { object: { id: 'ord_3', status: 'pending', total: 1 } } }),
    });
    await expectProblem(forged, 401, 'webhook_signature_invalid');
    expect(await inboxRows('msg_forged')).toEqual([]);

    const wrongKey = createSigner({ secrets: generateSecret() }).headers({
      id: 'msg_other_key',
      timestamp: NOW_SECONDS,
      body: JSON.stringify(event),
    });
    const other = await fetch(`${base}/hooks/shop`, {
      method: 'POST',
      headers: { ...wrongKey, 'content-type': 'application/json' },
      body: JSON.stringify(event),
    });
    await expectProblem(other, 401, 'webhook_signature_invalid');
    expect(await inboxRows('msg_other_key')).toEqual([]);
  });

  it('refuses a timestamp outside the 5-minute tolerance with 400, however well signed', async () => {
    const event = orderEvent('order.created', 1, { id: 'ord_4', status: 'pending', total: 100 });
    const stale = await deliver({ id: 'msg_stale', payload: event, timestamp: NOW_SECONDS - 301 });
    await expectProblem(stale, 400, 'webhook_timestamp_out_of_window');
    const future = await deliver({ id: 'msg_future', payload: event, timestamp: NOW_SECONDS + 301 });
    await expectProblem(future, 400, 'webhook_timestamp_out_of_window');
    // At the edge of the tolerance it is still accepted.
    expect((await deliver({ id: 'msg_edge', payload: event, timestamp: NOW_SECONDS - 300 })).status).toBe(
      204,
    );
    expect(await inboxRows('msg_stale')).toEqual([]);
    expect(await inboxRows('msg_future')).toEqual([]);
  });

  it('answers 404 problem+json for a receiver it does not know and for any other path', async () => {
    const event = orderEvent('order.created', 1, { id: 'ord_5', status: 'pending', total: 100 });
    await expectProblem(
      await deliver({ id: 'msg_unknown', payload: event, path: '/hooks/nobody' }),
      404,
      'not_found',
    );
    await expectProblem(await fetch(`${base}/orders/ord_missing`), 404, 'not_found');
    await expectProblem(await fetch(`${base}/elsewhere`), 404, 'not_found');
    expect(await inboxRows('msg_unknown')).toEqual([]);
  });
});
