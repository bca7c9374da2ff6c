import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { captureResponse, nodeListener, toRequest, writeResponse } from '../src/index';

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

async function listen(listener: Parameters<typeof createServer>[1] & object): Promise<string> {
  server = createServer(listener).listen(0, '127.0.0.1');
  await new Promise((resolve) => server?.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('toRequest', () => {
  it('carries method, URL, repeated headers and the body as a stream', async () => {
    let seen: { method: string; url: string; accept: string | null; body: string } | undefined;
    const url = await listen(
      nodeListener(async (request) => {
        seen = {
          method: request.method,
          url: request.url,
          accept: request.headers.get('x-many'),
          body: await request.text(),
        };
        return new Response(null, { status: 204 });
      }),
    );
    const headers = new Headers([
      ['x-many', 'a'],
      ['x-many', 'b'],
    ]);
    const response = await fetch(`${url}/a/b?c=1`, { method: 'PUT', headers, body: 'x'.repeat(100_000) });
    expect(response.status).toBe(204);
    expect(seen?.method).toBe('PUT');
    expect(new URL(seen?.url ?? '').pathname + new URL(seen?.url ?? '').search).toBe('/a/b?c=1');
    expect(seen?.accept).toBe('a, b');
    expect(seen?.body.length).toBe(100_000);
  });

  it('uses a body a parser already read, and Express originalUrl', async () => {
    const url = await listen(async (req, res) => {
      Object.assign(req, { body: { a: 1 }, originalUrl: '/mounted/x', url: '/x' });
      const request = toRequest(req, { res });
      await writeResponse(res, new Response(`${new URL(request.url).pathname} ${await request.text()}`));
    });
    const response = await fetch(`${url}/mounted/x`, { method: 'POST', body: '{"a": 1}' });
    expect(await response.text()).toBe('/mounted/x {"a":1}');
  });

  it('aborts the signal when the client goes away before the answer', async () => {
    let arrived: (request: { aborted: Promise<boolean> }) => void = () => {};
    const handled = new Promise<{ aborted: Promise<boolean> }>((resolve) => {
      arrived = resolve;
    });
    const url = await listen((req, res) => {
      const request = toRequest(req, { res });
      arrived({
        aborted: new Promise((resolve) => request.signal.addEventListener('abort', () => resolve(true))),
      });
    });
    const { port } = new URL(url);
    const client = httpRequest({ port, host: '127.0.0.1', path: '/', method: 'GET' });
    client.on('error', () => {});
    client.end();
    const { aborted } = await handled;
    client.destroy();
    expect(await aborted).toBe(true);
  });

  it('survives a malformed Host header', async () => {
    const url = await listen(
      nodeListener((request) => new Response(new URL(request.url).pathname, { status: 200 })),
    );
    const { port } = new URL(url);
    const text = await new Promise<string>((resolve, reject) => {
      const client = httpRequest({ port, host: '127.0.0.1', path: '/p', headers: { host: 'a b' } }, (res) => {
        let data = '';
        res.on('data', (chunk) => {
          data += chunk;
        });
        res.on('end', () => resolve(`${res.statusCode} ${data}`));
      });
      client.on('error', reject);
      client.end();
    });
    expect(text).toBe('200 /p');
  });
});

describe('writeResponse', () => {
  it('writes status, every Set-Cookie, headers set before, and a streamed body', async () => {
    const url = await listen(async (_req, res) => {
      res.setHeader('Request-Id', 'req_1');
      const headers = new Headers({ 'content-type': 'text/plain' });
      headers.append('set-cookie', 'a=1');
      headers.append('set-cookie', 'b=2');
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < 3; i++) controller.enqueue(new TextEncoder().encode(`chunk${i};`));
          controller.close();
        },
      });
      await writeResponse(res, new Response(body, { status: 201, headers }));
    });
    const response = await fetch(url);
    expect(response.status).toBe(201);
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(response.headers.get('request-id')).toBe('req_1');
    expect(await response.text()).toBe('chunk0;chunk1;chunk2;');
  });
});

describe('captureResponse', () => {
  it('holds what a handler writes until released', async () => {
    let captured: Response | undefined;
    const url = await listen(async (_req, res) => {
      const capture = captureResponse(res);
      res.statusCode = 202;
      res.setHeader('x-a', '1');
      res.write('hello ');
      res.end('world');
      captured = await capture.response;
      await capture.release(captured.clone());
    });
    const response = await fetch(url);
    expect(response.status).toBe(202);
    expect(response.headers.get('x-a')).toBe('1');
    expect(await response.text()).toBe('hello world');
    expect(await captured?.text()).toBe('hello world');
  });
});
