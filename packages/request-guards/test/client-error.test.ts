import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { holdfastProblems } from '@holdfast/problem-details';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerClientErrors, httpFramingProblems } from '../src/index';

// Real sockets against a real Node server: what its parser refuses never reaches a framework,
// so only raw bytes can show what the client gets back.

let server: Server;
let port = 0;

beforeAll(async () => {
  // Node answers a missing Host outside clientError (an empty 400); this server lets it through.
  server = createServer({ maxHeaderSize: 4096, requireHostHeader: false }, (req, res) => {
    if (req.url === '/slow') {
      // Starts its answer, then takes a while to finish it.
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '10' });
      res.write('partial');
      setTimeout(() => res.end('end'), 300);
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end('{"ok":true}');
  });
  answerClientErrors(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Sends `bytes` on a fresh connection and returns everything the server wrote before closing. */
function exchange(bytes: string | Uint8Array): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' || error.code === 'EPIPE'
        ? resolve(Buffer.concat(chunks).toString('latin1'))
        : reject(error),
    );
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
}

interface Parsed {
  status: number;
  headers: Map<string, string>;
  body: Record<string, unknown>;
}

/** The first response on the wire, which must be complete and problem+json. */
function parseProblem(raw: string): Parsed {
  const end = raw.indexOf('\r\n\r\n');
  expect(end, raw).toBeGreaterThan(0);
  const [statusLine = '', ...lines] = raw.slice(0, end).split('\r\n');
  const headers = new Map(
    lines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  const text = raw.slice(end + 4);
  expect(Number(headers.get('content-length'))).toBe(Buffer.byteLength(text, 'latin1'));
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(text) };
}

function expectProblem(parsed: Parsed, status: number, code: string): void {
  expect(parsed.status).toBe(status);
  expect(parsed.headers.get('content-type')).toBe('application/problem+json');
  expect(parsed.headers.get('connection')).toBe('close');
  expect(parsed.headers.get('request-id')).toMatch(/^req_[A-Za-z0-9_-]{22}$/);
  expect(parsed.body).toMatchObject({ status, code, requestId: parsed.headers.get('request-id') });
  expect(parsed.body.type).toBe(`/problems/${code}`);
  expect(typeof parsed.body.title).toBe('string');
  expect(typeof parsed.body.detail).toBe('string');
}

describe('answerClientErrors', () => {
  it('answers a request line over the header limit with 431 problem+json naming the path', async () => {
    const parsed = parseProblem(
      await exchange(`GET /v1/orders?q=${'a'.repeat(8000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
    );
    expectProblem(parsed, 431, 'header_fields_too_large');
    expect(parsed.body.instance).toBe('/v1/orders');
  });

  it('answers oversized headers with 431, and never echoes a path over 2 KiB', async () => {
    const headers = parseProblem(
      await exchange(`GET /v1/x HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(8000)}\r\n\r\n`),
    );
    expectProblem(headers, 431, 'header_fields_too_large');
    expect(headers.body.instance).toBe('/v1/x');
    const path = parseProblem(await exchange(`GET /${'p'.repeat(5000)} HTTP/1.1\r\nHost: x\r\n\r\n`));
    expectProblem(path, 431, 'header_fields_too_large');
    expect(path.body.instance).toBeUndefined();
  });

  it('answers bytes that are not HTTP with 400 malformed_request', async () => {
    const header = parseProblem(await exchange('GET /v1/orders HTTP/1.1\r\nBad Header\r\n\r\n'));
    expectProblem(header, 400, 'malformed_request');
    expect(header.body.instance).toBe('/v1/orders');
    const method = parseProblem(await exchange('BLAH\r\n\r\n'));
    expectProblem(method, 400, 'malformed_request');
    expect(method.body.instance).toBeUndefined();
  });

  it('leaves well-formed requests to the server', async () => {
    const raw = await exchange('GET /v1/orders HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(raw).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(raw.endsWith('{"ok":true}')).toBe(true);
  });

  it('any bytes a client sends get either the server’s answer or a complete problem+json', async () => {
    const requestLine = fc
      .tuple(
        fc.constantFrom('GET', 'POST', 'BREW', 'get', ''),
        fc.string({ unit: 'binary-ascii', maxLength: 40 }),
        fc.constantFrom(' HTTP/1.1', ' HTTP/1.0', ' HTTP/9.9', '', ' '),
      )
      .map(([method, target, version]) => `${method} /${target}${version}\r\n`);
    const header = fc.oneof(
      fc.constant('Host: x\r\n'),
      fc.string({ unit: 'binary-ascii', maxLength: 30 }).map((line) => `${line}\r\n`),
      fc.integer({ min: 1, max: 9000 }).map((n) => `X-Pad: ${'z'.repeat(n)}\r\n`),
    );
    await fc.assert(
      fc.asyncProperty(requestLine, fc.array(header, { maxLength: 4 }), async (line, headers) => {
        const raw = await exchange(`${line}${headers.join('')}Connection: close\r\n\r\n`);
        expect(raw, 'an answer, never a silently closed socket').not.toBe('');
        if (/^HTTP\/1\.1 200 /.test(raw)) return;
        const parsed = parseProblem(raw);
        const definitions: Record<string, { status: number }> = {
          ...holdfastProblems.definitions,
          ...httpFramingProblems.definitions,
        };
        expect(definitions[String(parsed.body.code)]?.status).toBe(parsed.status);
        expectProblem(parsed, parsed.status, String(parsed.body.code));
      }),
      { numRuns: 150 },
    );
  });

  it('writes nothing to a socket that can no longer be written', () => {
    const written: string[] = [];
    let destroyed = false;
    const other = createServer();
    answerClientErrors(other);
    other.emit('clientError', Object.assign(new Error('parse'), { code: 'HPE_INVALID_METHOD' }), {
      writable: false,
      end: (data: string) => written.push(data),
      destroy: () => {
        destroyed = true;
      },
    });
    expect(written).toEqual([]);
    expect(destroyed).toBe(true);
  });

  it('never splices a problem into a response already under way on a keep-alive socket', async () => {
    // The second, pipelined request is malformed while the first answer is half sent: the
    // client must see the first answer's bytes and no problem document inside them.
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n'));
      const chunks: Buffer[] = [];
      socket.on('data', (chunk) => {
        chunks.push(chunk);
        if (Buffer.concat(chunks).includes('partial') && chunks.length === 1) socket.write('BLAH\r\n\r\n');
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    });
    expect(raw).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(raw).toContain('partial');
    expect(raw).not.toContain('problem+json');
  });
});
