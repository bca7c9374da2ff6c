import { gzipSync } from 'node:zlib';
import { type Conversation, expectProblem, parseLastResponse, rawHttp } from '@holdfast/node-bridge/raw-http';
import { httpFramingProblems } from '@holdfast/request-guards';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config';
import { contractDefinitions } from '../src/problems';
import { call, KEYS, startTestServer, type TestServer } from './api-harness';

// Issue 28 (CONTRACT section 11) over the reference server's real socket: framing no route
// should see is problem+json with a Request-Id, 100 Continue only after authentication, one
// address cannot take every connection, HTML pages carry a CSP and cannot be framed, If-Match
// and Idempotency-Key are read by their RFCs, and an API key the parser would never accept does
// not start the server.

const MAX_CONNECTIONS = 20;
let t: TestServer;
let port = 0;

beforeAll(async () => {
  // The cap per address is left to its default: a quarter of HOLDFAST_MAX_CONNECTIONS.
  t = await startTestServer({ HOLDFAST_MAX_CONNECTIONS: String(MAX_CONNECTIONS) });
  port = Number(new URL(t.url).port);
});
afterAll(async () => {
  await t?.stop();
});

const { open, exchange } = rawHttp(() => port);

const ORDER = '{"currency":"EUR","total":1234,"description":"edge"}';
const postOrder = (headers: string, key: string = KEYS.all) =>
  `POST /v1/orders HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n${headers}\r\n`;

/** Orders described `edge`: a refused request must create none. */
async function edgeOrders(): Promise<number> {
  const list = await call(t.url, 'GET', '/v1/orders?limit=100');
  const data = list.body.data as unknown as Array<{ description?: string }>;
  return data.filter((order) => order.description === 'edge').length;
}

describe('framing no route sees', () => {
  it('a gzip body, and a plain one labelled br, are 415 with Accept-Encoding: identity; no order is made', async () => {
    const before = await edgeOrders();
    const gzip = gzipSync(ORDER);
    const zipped = parseLastResponse(
      await exchange(postOrder(`Content-Encoding: gzip\r\nContent-Length: ${gzip.length}\r\n`), gzip),
    );
    expectProblem(zipped, 415, 'unsupported_media_type');
    expect(zipped.headers.get('accept-encoding')).toBe('identity');
    expect(zipped.body.instance).toBe('/v1/orders');
    const labelled = parseLastResponse(
      await exchange(postOrder(`Content-Encoding: br\r\nContent-Length: ${ORDER.length}\r\n`), ORDER),
    );
    expectProblem(labelled, 415, 'unsupported_media_type');
    expect(await edgeOrders()).toBe(before);
  });

  it('Transfer-Encoding: gzip, chunked is 501 not_implemented; no order is made', async () => {
    const before = await edgeOrders();
    const chunked = `${ORDER.length.toString(16)}\r\n${ORDER}\r\n0\r\n\r\n`;
    const answer = parseLastResponse(
      await exchange(postOrder('Transfer-Encoding: gzip, chunked\r\n'), chunked),
    );
    expectProblem(answer, 501, 'not_implemented');
    expect(await edgeOrders()).toBe(before);
  });

  it('Expect: 200-ok is 417 problem+json', async () => {
    const answer = parseLastResponse(
      await exchange(postOrder(`Expect: 200-ok\r\nContent-Length: ${ORDER.length}\r\n`), ORDER),
    );
    expectProblem(answer, 417, 'expectation_failed');
  });

  it('CONNECT and a method Node does not know are 501; a known one the path lacks is 405 with Allow', async () => {
    expectProblem(
      parseLastResponse(await exchange('CONNECT 127.0.0.1:5432 HTTP/1.1\r\nHost: 127.0.0.1:5432\r\n\r\n')),
      501,
      'not_implemented',
    );
    expectProblem(
      parseLastResponse(await exchange('BREW /v1/orders HTTP/1.1\r\nHost: localhost\r\n\r\n')),
      501,
      'not_implemented',
    );
    const propfind = parseLastResponse(
      await exchange(
        `PROPFIND /v1/orders HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${KEYS.all}\r\nConnection: close\r\n\r\n`,
      ),
    );
    expectProblem(propfind, 405, 'method_not_allowed');
    expect(propfind.headers.get('allow')).toContain('POST');
  });

  it('Expect: 100-continue gets no 100 Continue before authentication: a bad key is answered 401 alone', async () => {
    const conversation = await open();
    conversation.socket.write(
      postOrder(
        `Expect: 100-continue\r\nContent-Length: ${ORDER.length}\r\n`,
        'hf_test_notAKeyAtAll00000000000000',
      ),
    );
    const raw = await conversation.closed;
    expect(raw).not.toMatch(/100 Continue/);
    expectProblem(parseLastResponse(raw), 401, 'unauthenticated');
  });

  it('with a valid key, 100 Continue comes, then the body is read and the order made', async () => {
    const before = await edgeOrders();
    const conversation = await open();
    conversation.socket.write(postOrder(`Expect: 100-continue\r\nContent-Length: ${ORDER.length}\r\n`));
    expect(await conversation.waitFor(/\r\n\r\n/)).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    conversation.socket.write(ORDER);
    const raw = await conversation.waitFor(/"description":"edge".*\}$/);
    expect(parseLastResponse(raw).status).toBe(201);
    conversation.socket.destroy();
    expect(await edgeOrders()).toBe(before + 1);
  });
});

describe('connections per address (HOLDFAST_MAX_CONNECTIONS=20, a quarter each by default)', () => {
  it('address A opens its cap and five more idle sockets: the five are closed with 503, another address is served', async () => {
    const cap = MAX_CONNECTIONS / 4;
    const held: Conversation[] = [];
    for (let i = 0; i < cap; i++) held.push(await open('127.0.1.2'));
    const extra: Conversation[] = [];
    for (let i = 0; i < 5; i++) extra.push(await open('127.0.1.2'));
    for (const conversation of extra) {
      const answer = parseLastResponse(await conversation.closed);
      expectProblem(answer, 503, 'service_unavailable');
      expect(answer.headers.get('retry-after')).toBe('1');
    }
    const other = await call(t.url, 'GET', '/v1/orders?limit=1');
    expect(other.status).toBe(200);
    for (const conversation of held) {
      expect(conversation.socket.destroyed).toBe(false);
      conversation.socket.destroy();
    }
  });
});

describe('HTML pages', () => {
  const codes = Object.keys({ ...contractDefinitions, ...httpFramingProblems.definitions });
  it.each(['/docs', '/problems', '/dashboard', ...codes.map((code) => `/problems/${code}`)])(
    '%s carries a strict CSP with frame-ancestors none, and X-Frame-Options: DENY',
    async (path) => {
      const response = await fetch(`${t.url}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp).toMatch(/(^|; )default-src 'none'(;|$)/);
      expect(csp).toMatch(/(^|; )frame-ancestors 'none'(;|$)/);
      expect(csp).not.toContain('unsafe-inline');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      await response.arrayBuffer();
    },
  );
});

describe('If-Match and Idempotency-Key by their RFCs', () => {
  it('If-Match: "zzz", * is 400 naming the header; a weak tag is 409; * and the strong tag match', async () => {
    const created = await call(t.url, 'POST', '/v1/orders', { body: { currency: 'EUR', total: 10 } });
    const path = `/v1/orders/${String(created.body.id)}`;
    const etag = (await call(t.url, 'GET', path)).headers.get('etag') ?? '';
    const patch = (ifMatch: string) =>
      call(t.url, 'PATCH', path, {
        body: { description: `d${Math.random()}` },
        headers: { 'if-match': ifMatch },
      });
    const mixed = await patch('"zzz", *');
    expect(mixed.status).toBe(400);
    expect(mixed.body.code).toBe('validation_failed');
    expect(mixed.body.errors).toMatchObject([{ field: 'If-Match' }]);
    expect((await patch(`W/${etag}`)).body.code).toBe('version_conflict');
    expect((await patch('*')).status).toBe(200);
    const current = (await call(t.url, 'GET', path)).headers.get('etag') ?? '';
    expect((await patch(`"nope", ${current}`)).status).toBe(200);
  });

  it.each(['"  "', '  ', '""'])(
    'Idempotency-Key: %j is 400 validation_failed naming the header',
    async (key) => {
      const answer = await call(t.url, 'POST', '/v1/orders', {
        body: { currency: 'EUR', total: 5, description: 'edge' },
        headers: { 'idempotency-key': key },
      });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({
        code: 'validation_failed',
        errors: [{ field: 'Idempotency-Key' }],
      });
    },
  );
});

describe('HOLDFAST_API_KEYS', () => {
  const env = (key: string) => ({
    HOLDFAST_API_KEYS: JSON.stringify([
      { key: KEYS.all, account: 'acct_a', scopes: ['*'] },
      { key, account: 'acct_a', scopes: ['*'] },
    ]),
  });

  it('a key the bearer parser would never accept (over 128 characters) is a start-up error naming its position only', () => {
    const long = `hf_test_${'k'.repeat(150)}`;
    let error: unknown;
    try {
      loadConfig(env(long));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(String(error)).toContain('HOLDFAST_API_KEYS[1]');
    expect(String(error)).not.toContain('kkkkkkkkkkkkkkkk');
  });

  it('a key at the parser bound of 128 characters loads', () => {
    expect(loadConfig(env(`hf_live_${'k'.repeat(128)}`)).apiKeys).toHaveLength(2);
  });
});
