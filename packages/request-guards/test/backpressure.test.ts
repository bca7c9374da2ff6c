import { EventEmitter, once } from 'node:events';
import type { Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { Hono } from 'hono';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withBackpressure } from '../src/backpressure';
import { createHonoServer } from '../src/hono-node';

let server: Server;
let port = 0;
/** The `n` of every `/count` request the app ran, in the order it ran them. */
let ran: string[] = [];
const progress = new EventEmitter();
/** `/count` answers only once this is released. */
let release: () => void = () => {};
let gate: Promise<void> = Promise.resolve();

beforeEach(async () => {
  ran = [];
  gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const app = new Hono();
  app.get('/count', async (c) => {
    const n = c.req.query('n') ?? '';
    ran.push(n);
    progress.emit('ran', ran.length);
    await gate;
    return c.text(`answer ${n}`);
  });
  app.get('/ping', (c) => c.text('pong'));
  server = createHonoServer(app.fetch, { hostname: '127.0.0.1', backpressure: { maxPipelined: 4 } });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterEach(async () => {
  release();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const request = (n: number) => `GET /count?n=${n} HTTP/1.1\r\nHost: x\r\n\r\n`;

/** A connection that reads nothing until told to. */
async function openQuiet(): Promise<{ socket: Socket; received: () => string }> {
  const socket = connect(port, '127.0.0.1');
  socket.pause();
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    text += chunk;
  });
  socket.on('error', () => {});
  await once(socket, 'connect');
  return { socket, received: () => text };
}

/** Resolves when the socket closes, reset or not. */
const closeOf = (socket: Socket) => new Promise<void>((resolve) => socket.once('close', () => resolve()));

/** Resolves once the app has run `count` `/count` requests. */
function ranCount(count: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (ran.length < count) return;
      progress.off('ran', check);
      resolve();
    };
    progress.on('ran', check);
    check();
  });
}

const answersIn = (raw: string) => [...raw.matchAll(/answer (\d+)/g)].map((match) => match[1]);

describe('backpressure on pipelined requests', () => {
  it('runs at most maxPipelined requests of a socket that pipelines without reading, closes it, and serves others meanwhile', async () => {
    const { socket, received } = await openQuiet();
    const closed = closeOf(socket);
    socket.write(Array.from({ length: 2000 }, (_, n) => request(n)).join(''));
    // Reading changes nothing here (the app holds every answer), but lets the close be seen.
    socket.resume();
    await closed;
    expect(ran).toEqual(['0', '1', '2', '3']);
    expect(received()).toBe('');
    const other = await fetch(`http://127.0.0.1:${port}/ping`);
    expect(await other.text()).toBe('pong');
    // Still bounded once the held answers complete.
    release();
    await fetch(`http://127.0.0.1:${port}/ping`);
    expect(ran).toEqual(['0', '1', '2', '3']);
  });

  it('stops reading a connection whose answers wait, and reads it again once they are taken', async () => {
    const { socket, received } = await openQuiet();
    socket.write(request(0));
    await ranCount(1);
    socket.write(request(1));
    await ranCount(2);
    // Two unanswered of at most four: the server reads no more of this connection.
    socket.write(Array.from({ length: 8 }, (_, n) => request(n + 2)).join(''));
    const other = await fetch(`http://127.0.0.1:${port}/ping`);
    expect(await other.text()).toBe('pong');
    expect(ran).toEqual(['0', '1']);
    // The answers go out and the server reads on: the eight waiting requests came in one read,
    // so those that fit beside the answers still unsent (none or one) run, in order, and the next
    // closes the connection.
    const closed = closeOf(socket);
    release();
    socket.resume();
    await closed;
    expect([
      ['0', '1', '2', '3', '4'],
      ['0', '1', '2', '3', '4', '5'],
    ]).toContainEqual(ran);
    expect(answersIn(received())[0]).toBe('0');
  });

  it('answers a client that pipelines within the bound and reads, in order, on one connection', async () => {
    release();
    const { socket, received } = await openQuiet();
    socket.resume();
    for (let round = 0; round < 5; round += 1) {
      const first = round * 3;
      socket.write([first, first + 1, first + 2].map(request).join(''));
      while (answersIn(received()).length < first + 3) await once(socket, 'data');
    }
    expect(answersIn(received())).toEqual(Array.from({ length: 15 }, (_, n) => String(n)));
    expect(socket.destroyed).toBe(false);
    socket.destroy();
  });

  it('refuses bounds that would stall or not bound', () => {
    const listener = () => {};
    expect(() => withBackpressure(listener, { maxPipelined: 1 })).toThrow(RangeError);
    expect(() => withBackpressure(listener, { maxPipelined: 2.5 })).toThrow(RangeError);
    expect(() => withBackpressure(listener, { maxUnsentBytes: 0 })).toThrow(RangeError);
  });
});
