import { connect } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './api-harness';

// Issue 35, items 1 and 6: the documents anyone may fetch without a key are built once, served
// with a strong ETag (304 on If-None-Match), and limited per client address (/livez and /readyz
// never); a connection that pipelines without reading is closed.
// Each block sends from its own loopback address (the whole 127.0.0.0/8 is loopback), so one
// block's bucket never touches another's.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ HOLDFAST_PUBLIC_RATE_LIMIT: '6/1m' });
});
const agents = new Map<string, Agent>();
afterAll(async () => {
  await Promise.all([...agents.values()].map((agent) => agent.close()));
  await t?.stop();
});

interface Got {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

async function get(address: string, path: string, headers: Record<string, string> = {}): Promise<Got> {
  let agent = agents.get(address);
  if (!agent) {
    agent = new Agent({ localAddress: address, connections: 2 });
    agents.set(address, agent);
  }
  const response = await request(`${t.url}${path}`, { headers, dispatcher: agent });
  const text = await response.body.text();
  const answer = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (typeof value === 'string') answer.set(name, value);
  }
  return { status: response.statusCode, headers: answer, text };
}

describe('documents that never change while the server runs', () => {
  it.each([
    ['/openapi.json', '127.0.0.5', 'application/json'],
    ['/docs', '127.0.0.6', 'text/html; charset=UTF-8'],
    ['/problems/not_found', '127.0.0.7', 'text/html; charset=UTF-8'],
  ])('%s: the same bytes with a strong ETag, 304 on If-None-Match', async (path, address, type) => {
    const first = await get(address, path);
    const second = await get(address, path);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe(type);
    const etag = first.headers.get('etag') ?? '';
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(first.headers.get('cache-control')).toMatch(/^(no-cache|public, max-age=\d+)$/);
    expect(second.headers.get('etag')).toBe(etag);
    expect(second.text).toBe(first.text);
    const again = await get(address, path, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('content-type')).toBeNull();
    const changed = await get(address, path, { 'if-none-match': '"something-else"' });
    expect(changed.status).toBe(200);
    expect(changed.text).toBe(first.text);
  });
});

describe('the public routes are limited per client address', () => {
  it('refuses a flood from one address with 429 and Retry-After while another address is served', async () => {
    const flood: Got[] = [];
    for (let i = 0; i < 8; i++) flood.push(await get('127.0.0.2', i % 2 === 0 ? '/openapi.json' : '/docs'));
    expect(flood.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
    const refused = flood[6];
    expect(refused?.headers.get('content-type')).toBe('application/problem+json');
    expect(JSON.parse(refused?.text ?? '{}')).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(flood[0]?.headers.get('ratelimit')).toMatch(/r=5/);
    // A 304 spends a token too: the limit is on requests, not on bytes.
    expect((await get('127.0.0.2', '/problems/not_found')).status).toBe(429);
    // Another address has its own bucket.
    expect((await get('127.0.0.3', '/openapi.json')).status).toBe(200);
    expect((await get('127.0.0.3', '/problems')).status).toBe(200);
  });

  it('never limits /livez and /readyz', async () => {
    for (let i = 0; i < 8; i++) await get('127.0.0.4', '/openapi.json');
    expect((await get('127.0.0.4', '/openapi.json')).status).toBe(429);
    const probes: number[] = [];
    for (let i = 0; i < 10; i++) {
      probes.push((await get('127.0.0.4', '/livez')).status, (await get('127.0.0.4', '/readyz')).status);
    }
    expect(probes).toEqual(Array.from({ length: 20 }, () => 200));
  });
});

describe('a connection that pipelines and never reads', () => {
  it('is closed by the server, and another client is answered meanwhile', async () => {
    const { port } = new URL(t.url);
    const socket = connect({ port: Number(port), host: '127.0.0.1', localAddress: '127.0.8.1' });
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('connect', resolve));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // 2,000 requests in one write: the server reads far more than 16 at once, runs 16 and closes.
    socket.write(
      `GET /livez HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(1000) +
        `GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(1000),
    );
    // Reading only lets the close be seen: the answers are dropped unread.
    socket.resume();
    expect((await get('127.0.8.2', '/livez')).status).toBe(200);
    await closed;
    expect((await get('127.0.8.2', '/livez')).status).toBe(200);
  });
});
