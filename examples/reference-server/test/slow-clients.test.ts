import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KEYS, startTestServer, type TestServer } from './api-harness';

// CONTRACT section 10, slow clients: headers within the header timeout and the whole request
// within the request timeout, else 408 problem+json and the connection closed; connections
// beyond the cap are closed at once. The timeouts are shortened here (10 s and 30 s by default).

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({
    HOLDFAST_HEADERS_TIMEOUT: '400ms',
    HOLDFAST_REQUEST_TIMEOUT: '1200ms',
    HOLDFAST_MAX_CONNECTIONS: '3',
    HOLDFAST_MAX_CONNECTIONS_PER_ADDRESS: '3',
  });
});
afterAll(async () => {
  await t?.stop();
});

/** Opens a socket to the server and collects what it answers until the server closes it. */
function open(): Promise<{ socket: Socket; closed: Promise<{ text: string; afterMs: number }> }> {
  const { port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      const started = performance.now();
      const chunks: Buffer[] = [];
      socket.on('data', (chunk) => chunks.push(chunk));
      const closed = new Promise<{ text: string; afterMs: number }>((done) => {
        socket.on('close', () =>
          done({ text: Buffer.concat(chunks).toString('utf8'), afterMs: performance.now() - started }),
        );
      });
      resolve({ socket, closed });
    });
    socket.on('error', reject);
  });
}

it('headers that never finish get 408 problem+json after the header timeout, and the connection closes', async () => {
  const { socket, closed } = await open();
  socket.write('GET /v1/orders HTTP/1.1\r\nHost: localhost\r\nX-Slow: ');
  const { text, afterMs } = await closed;
  expect(text).toMatch(/^HTTP\/1\.1 408 /);
  expect(text).toMatch(/content-type: application\/problem\+json/i);
  expect(text).toMatch(/"status":408/);
  expect(afterMs).toBeGreaterThanOrEqual(300);
  expect(afterMs).toBeLessThan(5_000);
});

it('a body that trickles past the request timeout gets 408 and the connection closes', async () => {
  const { socket, closed } = await open();
  socket.write(
    `POST /v1/orders HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${KEYS.all}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"cur`,
  );
  // Keep sending a byte now and then: it never completes, and the request timeout still ends it.
  const drip = setInterval(() => socket.writable && socket.write(' '), 200);
  const { text, afterMs } = await closed;
  clearInterval(drip);
  expect(text).toMatch(/^HTTP\/1\.1 408 /);
  expect(afterMs).toBeGreaterThanOrEqual(1_000);
  expect(afterMs).toBeLessThan(6_000);
});

it('connections beyond HOLDFAST_MAX_CONNECTIONS are closed at once', async () => {
  const held = await Promise.all([open(), open(), open()]);
  const extra = await open();
  const { text, afterMs } = await extra.closed;
  expect(text).toBe('');
  expect(afterMs).toBeLessThan(300);
  for (const { socket } of held) socket.destroy();
});
