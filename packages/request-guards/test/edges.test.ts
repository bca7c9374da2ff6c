import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { expectProblem, parseLastResponse, rawHttp } from '@holdfast/node-bridge/raw-http';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressKey } from '../src/address-cap';
import { createHonoServer } from '../src/hono-node';

// Real sockets against createHonoServer: framing a route must never see (content and transfer
// codings, Expect, CONNECT, unknown methods) and the per-address connection cap. Only raw bytes
// show what a client gets back, and whether a 100 Continue went out before the app answered.

const PER_ADDRESS = 4;
let server: Server;
let port = 0;
/** What the app saw: a refused request must never reach it. */
const seen: string[] = [];

beforeAll(async () => {
  const app = new Hono();
  app.get('/', (c) => c.json({ ok: true }));
  // Stands in for authentication: answers 401 without reading the body unless the key is right.
  app.post('/things', async (c) => {
    if (c.req.header('authorization') !== 'Bearer ok') return c.json({ code: 'unauthenticated' }, 401);
    const body = await c.req.text();
    seen.push(body);
    return c.json({ received: body }, 201);
  });
  server = createHonoServer(app.fetch, {
    hostname: '127.0.0.1',
    limits: {
      headersTimeoutMs: 5_000,
      requestTimeoutMs: 10_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 40,
      maxConnectionsPerAddress: PER_ADDRESS,
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const { open, exchange } = rawHttp(() => port);

const post = (headers: string, length: number) =>
  `POST /things HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ok\r\nContent-Type: application/json\r\n${headers}Content-Length: ${length}\r\n\r\n`;

describe('content and transfer codings', () => {
  it('refuses a gzip body with 415 and Accept-Encoding: identity, unread (RFC 9110 section 15.5.16)', async () => {
    const body = gzipSync('{"a":1}');
    const answer = parseLastResponse(await exchange(post('Content-Encoding: gzip\r\n', body.length), body));
    expectProblem(answer, 415, 'unsupported_media_type');
    expect(answer.headers.get('accept-encoding')).toBe('identity');
    expect(answer.headers.get('connection')).toBe('close');
    expect(answer.body.instance).toBe('/things');
    expect(seen).not.toContain('{"a":1}');
  });

  it.each(['br', 'identity, gzip', 'x-unknown', 'GZIP'])(
    'refuses a plain body labelled %s with 415',
    async (coding) => {
      const answer = parseLastResponse(await exchange(post(`Content-Encoding: ${coding}\r\n`, 7), '{"b":2}'));
      expectProblem(answer, 415, 'unsupported_media_type');
      expect(seen).not.toContain('{"b":2}');
    },
  );

  it('accepts identity, as if absent', async () => {
    const answer = parseLastResponse(
      await exchange(post('Content-Encoding: identity\r\nConnection: close\r\n', 7), '{"c":3}'),
    );
    expect(answer.status).toBe(201);
    expect(answer.body).toEqual({ received: '{"c":3}' });
  });

  it('refuses Transfer-Encoding: gzip, chunked with 501 not_implemented (RFC 9112 section 6.1)', async () => {
    const head =
      'POST /things HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ok\r\nTransfer-Encoding: gzip, chunked\r\n\r\n';
    const answer = parseLastResponse(await exchange(head, '7\r\n{"d":4}\r\n0\r\n\r\n'));
    expectProblem(answer, 501, 'not_implemented');
    expect(answer.headers.get('connection')).toBe('close');
    expect(seen).not.toContain('{"d":4}');
  });

  it('refuses a Transfer-Encoding that does not end with chunked with 400 (RFC 9112 section 6.3)', async () => {
    const head =
      'POST /things HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ok\r\nTransfer-Encoding: gzip\r\n\r\n';
    const answer = parseLastResponse(await exchange(head, '{"e":5}'));
    expectProblem(answer, 400, 'malformed_request');
    expect(seen).not.toContain('{"e":5}');
  });
});

describe('Expect, CONNECT and unknown methods', () => {
  it('answers Expect: 200-ok with 417 problem+json and a Request-Id', async () => {
    const answer = parseLastResponse(await exchange(post('Expect: 200-ok\r\n', 7), '{"f":6}'));
    expectProblem(answer, 417, 'expectation_failed');
    expect(seen).not.toContain('{"f":6}');
  });

  it('sends no 100 Continue to a request the app refuses without reading its body', async () => {
    const conversation = await open();
    conversation.socket.write(
      'POST /things HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer wrong\r\nExpect: 100-continue\r\nContent-Length: 7\r\n\r\n',
    );
    const raw = await conversation.waitFor(/\r\n\r\n\{.*\}$/);
    expect(raw).toMatch(/^HTTP\/1\.1 401 /);
    expect(raw).not.toMatch(/100 Continue/);
    // The body was never asked for: the connection does not wait for it to frame a next request.
    expect(await conversation.closed).toBe(raw);
  });

  it('sends 100 Continue once the app reads the body, then the answer', async () => {
    const conversation = await open();
    conversation.socket.write(
      'POST /things HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ok\r\nExpect: 100-continue\r\nContent-Length: 7\r\n\r\n',
    );
    expect(await conversation.waitFor(/\r\n\r\n/)).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    conversation.socket.write('{"g":7}');
    const raw = await conversation.waitFor(/\{"received".*\}$/);
    expect(parseLastResponse(raw)).toMatchObject({ status: 201, body: { received: '{"g":7}' } });
    conversation.socket.destroy();
  });

  it('answers CONNECT with 501 problem+json instead of closing the socket silently', async () => {
    const answer = parseLastResponse(
      await exchange('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'),
    );
    expectProblem(answer, 501, 'not_implemented');
    expect(answer.headers.get('connection')).toBe('close');
  });

  it('answers a method Node does not know with 501 problem+json', async () => {
    const answer = parseLastResponse(await exchange('BREW /things HTTP/1.1\r\nHost: localhost\r\n\r\n'));
    expectProblem(answer, 501, 'not_implemented');
    expect(answer.body.instance).toBe('/things');
  });
});

describe('connections per address', () => {
  it('keys IPv4 by address and IPv6 by /64', () => {
    expect(addressKey('192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('2001:db8:1:2:aa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });

  it('an address over its cap is answered 503 and closed, and another address is still served', async () => {
    // Address A (127.0.1.2, another /24 than the client on 127.0.0.1) opens its cap and five more idle sockets, sending nothing.
    const held = [];
    for (let i = 0; i < PER_ADDRESS; i++) held.push(await open('127.0.1.2'));
    const extra = [];
    for (let i = 0; i < 5; i++) extra.push(await open('127.0.1.2'));
    for (const conversation of extra) {
      const raw = await conversation.closed;
      expectProblem(parseLastResponse(raw), 503, 'service_unavailable');
      expect(parseLastResponse(raw).headers.get('retry-after')).toBe('1');
    }
    // Another address is served on a fresh connection.
    const other = parseLastResponse(
      await exchange('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'),
    );
    expect(other).toMatchObject({ status: 200, body: { ok: true } });
    // A's connections within the cap are untouched, and serve requests.
    for (const conversation of held) expect(conversation.socket.destroyed).toBe(false);
    const first = held[0];
    first?.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(parseLastResponse((await first?.waitFor(/\{"ok":true\}$/)) ?? '').status).toBe(200);
    // Once one of them closes, A may open another.
    held.pop()?.socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const again = await open('127.0.1.2');
    again.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    expect(parseLastResponse(await again.closed).status).toBe(200);
    for (const conversation of held) conversation.socket.destroy();
  });
});
