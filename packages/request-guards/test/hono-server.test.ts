import type { Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHonoServer } from '../src/hono-node';

let server: Server;
let port = 0;

beforeAll(async () => {
  const app = new Hono();
  app.get('/', (c) => c.json({ ok: true }));
  app.delete('/thing', (c) => c.body(null, 204));
  server = createHonoServer(app.fetch, {
    hostname: '127.0.0.1',
    limits: { headersTimeoutMs: 400, requestTimeoutMs: 800, keepAliveTimeoutMs: 1000, maxConnections: 50 },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Sends `bytes` on a fresh connection and returns what the server wrote before closing. */
function exchange(bytes: string, keepOpen = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => (keepOpen ? socket.write(bytes) : socket.end(bytes)));
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

const bodyOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));

describe('createHonoServer', () => {
  it('serves the app and applies the limits', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/`);
    expect(await response.json()).toEqual({ ok: true });
    expect(server.headersTimeout).toBe(400);
    expect(server.requestTimeout).toBe(800);
    expect(server.keepAliveTimeout).toBe(1000);
    expect(server.maxConnections).toBe(50);
  });

  it('answers an HTTP/1.1 request without Host with 400 malformed_request (RFC 9112 section 3.2)', async () => {
    const raw = await exchange('GET /orders?secret=1 HTTP/1.1\r\n\r\n');
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toMatch(/content-type: application\/problem\+json/i);
    expect(raw).toMatch(/connection: close/i);
    const body = bodyOf(raw);
    expect(body).toMatchObject({ code: 'malformed_request', status: 400, instance: '/orders' });
    expect(body.requestId).toMatch(/^req_/);
  });

  it('answers a target the adapter cannot read as a URL with problem+json, not a bare 400', async () => {
    const raw = await exchange('GET /a\\b HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(bodyOf(raw)).toMatchObject({
      code: 'malformed_request',
      detail: 'The request path contains a backslash.',
    });
  });

  it('gives a 204 no Content-Type', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/thing`, { method: 'DELETE' });
    expect(response.status).toBe(204);
    expect(response.headers.get('content-type')).toBeNull();
  });

  it('answers a client too slow with its headers 408 request_timeout', async () => {
    const raw = await exchange('GET / HTTP/1.1\r\nHost: localhost\r\n', true);
    expect(raw).toMatch(/^HTTP\/1\.1 408 /);
    expect(bodyOf(raw).code).toBe('request_timeout');
  });
});
