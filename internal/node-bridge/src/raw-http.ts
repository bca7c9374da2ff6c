import { connect, type Socket } from 'node:net';
import { expect } from 'vitest';

// Raw HTTP/1.1 over a socket, for tests of what a client gets back on the wire: framing no
// route should see, a 100 Continue sent (or not) before the answer, connections a cap refuses.

/** A raw connection: a wait for a pattern in what it has received, and its close. */
export interface Conversation {
  readonly socket: Socket;
  waitFor(pattern: RegExp): Promise<string>;
  /** Everything the server wrote, once it closed the connection. */
  readonly closed: Promise<string>;
}

/** An answer read off the wire. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: Map<string, string>;
  readonly body: Record<string, unknown>;
}

/**
 * Connections to `127.0.0.1:port()` (read at each connection, so a port assigned in a
 * `beforeAll` works): `open` one from `localAddress`, or `exchange` a request on a fresh one and
 * get all the server wrote until it closed.
 *
 * @example
 * ```ts
 * const { exchange } = rawHttp(() => port);
 * const answer = parseLastResponse(await exchange('CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n'));
 * ```
 */
export function rawHttp(port: () => number): {
  open(localAddress?: string): Promise<Conversation>;
  exchange(head: string, body?: Uint8Array | string): Promise<string>;
} {
  const open = (localAddress = '127.0.0.1'): Promise<Conversation> =>
    new Promise((resolve, reject) => {
      const socket = connect({ port: port(), host: '127.0.0.1', localAddress }, () => {
        let text = '';
        const waiters: Array<() => void> = [];
        socket.setEncoding('latin1');
        socket.on('data', (chunk: string) => {
          text += chunk;
          for (const wake of waiters.splice(0)) wake();
        });
        const closed = new Promise<string>((done) => socket.on('close', () => done(text)));
        socket.on('error', () => {});
        resolve({
          socket,
          closed,
          waitFor(pattern) {
            return new Promise((done, fail) => {
              const check = () => {
                if (pattern.test(text)) done(text);
                else if (socket.destroyed)
                  fail(new Error(`closed before ${pattern}: ${JSON.stringify(text)}`));
                else waiters.push(check);
              };
              socket.once('close', check);
              check();
            });
          },
        });
      });
      socket.once('error', reject);
    });
  const exchange = async (head: string, body: Uint8Array | string = ''): Promise<string> => {
    const conversation = await open();
    conversation.socket.write(head);
    if (body.length > 0) conversation.socket.write(body);
    return conversation.closed;
  };
  return { open, exchange };
}

/** The last response on the wire (after any 100 Continue), parsed. */
export function parseLastResponse(raw: string): RawAnswer {
  const text = raw.slice(raw.lastIndexOf('HTTP/1.1 '));
  const end = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const headers = new Map(
    lines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  const body = text.slice(end + 4);
  return { status: Number(statusLine.split(' ')[1]), headers, body: body === '' ? {} : JSON.parse(body) };
}

/** `answer` is problem+json of `status` and `code`, with its `Request-Id` in the header and body. */
export function expectProblem(answer: RawAnswer, status: number, code: string): void {
  expect(answer.status).toBe(status);
  expect(answer.headers.get('content-type')).toBe('application/problem+json');
  expect(answer.headers.get('request-id')).toMatch(/^req_/);
  expect(answer.body).toMatchObject({ status, code, requestId: answer.headers.get('request-id') });
}
