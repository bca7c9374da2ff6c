import { type Conversation, expectProblem, parseLastResponse, rawHttp } from '@holdfast/node-bridge/raw-http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KEYS, startTestServer, type TestServer } from './api-harness';

// Slow clients: headers within the header timeout and the whole request within the request
// timeout, else 408 problem+json and the connection closed; connections beyond the cap are
// closed at once. The timeouts are shortened here (10 s and 30 s by default). What is asserted
// is the outcome and its order (a 408, then the close; a client that sends in time is served),
// never how long anything took: Node's parser keeps the time, and a loaded machine only makes
// the wait longer.

let t: TestServer;
let port = 0;
beforeAll(async () => {
  t = await startTestServer({
    HOLDFAST_HEADERS_TIMEOUT: '400ms',
    HOLDFAST_REQUEST_TIMEOUT: '1200ms',
    HOLDFAST_MAX_CONNECTIONS: '3',
    HOLDFAST_MAX_CONNECTIONS_PER_ADDRESS: '3',
  });
  port = Number(new URL(t.url).port);
});
afterAll(async () => {
  await t?.stop();
});

const { open } = rawHttp(() => port);

const LIST = `GET /v1/orders HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${KEYS.all}\r\nConnection: close\r\n\r\n`;
const ORDER = '{"currency":"EUR","total":100}';
const POST_HEAD = `POST /v1/orders HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${KEYS.all}\r\nContent-Type: application/json\r\nConnection: close\r\n`;

/** Whether the connection has closed, read without waiting. */
function closedYet(conversation: Conversation): boolean {
  return conversation.socket.destroyed;
}

/** A 408 `request_timeout` problem, as the only response on the wire, followed by the close. */
function expectTimedOut(text: string): void {
  expect(text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
  const answer = parseLastResponse(text);
  expectProblem(answer, 408, 'request_timeout');
  expect(answer.headers.get('connection')).toBe('close');
}

it('headers that never finish get 408 problem+json and then the close; a client whose headers come in time is served', async () => {
  const slow = await open();
  slow.socket.write('GET /v1/orders HTTP/1.1\r\nHost: localhost\r\nX-Slow: ');
  // All its headers in one write: the header timeout never applies to it.
  const timely = await open();
  timely.socket.write(LIST);
  const served = parseLastResponse(await timely.closed);
  expect(served.status).toBe(200);
  // The 408 is written before the server closes: `closed` resolves with everything received.
  expectTimedOut(await slow.closed);
  expect(closedYet(slow)).toBe(true);
});

it('a body that trickles past the request timeout gets 408 and then the close; a body sent in time is served', async () => {
  const trickle = await open();
  trickle.socket.write(`${POST_HEAD}Content-Length: 100\r\n\r\n{"cur`);
  // A byte now and then: the body never completes, and the request timeout still ends it.
  let drips = 0;
  const drip = setInterval(() => {
    if (trickle.socket.writable) {
      trickle.socket.write(' ');
      drips += 1;
    }
  }, 100);
  try {
    const timely = await open();
    timely.socket.write(`${POST_HEAD}Content-Length: ${ORDER.length}\r\n\r\n${ORDER}`);
    expect(parseLastResponse(await timely.closed).status).toBe(201);
    expectTimedOut(await trickle.closed);
  } finally {
    clearInterval(drip);
  }
  // The server did not end it on the incomplete body itself: drips went out while it was open.
  expect(drips).toBeGreaterThan(0);
});

it('a connection beyond HOLDFAST_MAX_CONNECTIONS is closed at once, unanswered, while the three it exceeds stay open and are served', async () => {
  const held = await Promise.all([open(), open(), open()]);
  const extra = await open();
  expect(await extra.closed).toBe('');
  // Order, not time: when the extra connection was closed, none of the three held was.
  expect(held.filter(closedYet)).toEqual([]);
  for (const conversation of held) conversation.socket.write(LIST);
  const answers = await Promise.all(held.map((conversation) => conversation.closed));
  expect(answers.map((text) => parseLastResponse(text).status)).toEqual([200, 200, 200]);
});
