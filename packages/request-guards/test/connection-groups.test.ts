import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { Hono } from 'hono';
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { addressKey, limitConnectionsPerAddress } from '../src/address-cap';
import { createHonoServer } from '../src/hono-node';

// Connections are capped per client, not per exact address: IPv4 clients by /24 (as IPv6 by
// /64), and the last part of the server's budget is kept for clients holding few. Real sockets
// from loopback addresses (the whole 127.0.0.0/8 is loopback), small caps.

let server: Server | undefined;
let port = 0;
const clients: Socket[] = [];
const agents: Agent[] = [];
/** For each connection the server saw, in order: its address and whether it was admitted. */
let seen: { address: string; admitted: boolean }[] = [];
let arrived: () => void = () => {};

async function start(built: Server): Promise<void> {
  server = built;
  seen = [];
  // Listens after the cap did: a refused socket is destroyed by the time this runs.
  built.on('connection', (socket: Socket) => {
    seen.push({ address: socket.remoteAddress ?? '', admitted: !socket.destroyed });
    arrived();
  });
  await new Promise<void>((resolve) => built.listen(0, '127.0.0.1', resolve));
  port = (built.address() as AddressInfo).port;
}

afterEach(async () => {
  for (const socket of clients.splice(0)) socket.destroy();
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
  const open = server;
  server = undefined;
  if (!open) return;
  open.closeAllConnections();
  await new Promise((resolve) => open.close(resolve));
});

/**
 * Opens a connection from `address` that sends half a request's headers and no more (a slow
 * client), and resolves once the server has admitted or refused it (a refused one has closed).
 */
async function slow(address: string): Promise<boolean> {
  const before = seen.length;
  const socket = connect({ port, host: '127.0.0.1', localAddress: address });
  clients.push(socket);
  socket.on('error', () => {});
  // Read (and drop) what comes, so that a refusal's close is seen.
  socket.resume();
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write('GET / HTTP/1.1\r\nHost: x\r\n');
  await new Promise<void>((resolve) => {
    arrived = () => {
      if (seen.length > before) resolve();
    };
    arrived();
  });
  const admitted = seen[before]?.admitted ?? false;
  // A refused connection leaves its slot before the next one comes.
  if (!admitted) await closed;
  return admitted;
}

async function served(address: string): Promise<number> {
  const agent = new Agent({ localAddress: address, connections: 1 });
  agents.push(agent);
  const response = await request(`http://127.0.0.1:${port}/`, { dispatcher: agent });
  await response.body.text();
  return response.statusCode;
}

const limits = (maxConnections: number, maxConnectionsPerAddress: number) => ({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections,
  maxConnectionsPerAddress,
});

function app() {
  const hono = new Hono();
  hono.get('/', (c) => c.text('ok'));
  return hono;
}

describe('connections per client', () => {
  it('groups IPv4 by the prefix asked, IPv6 by /64', () => {
    expect(addressKey('192.0.2.7', 24)).toBe('192.0.2.0/24');
    expect(addressKey('::ffff:192.0.2.200', 24)).toBe('192.0.2.0/24');
    expect(addressKey('192.0.2.7', 16)).toBe('192.0.0.0/16');
    expect(addressKey('203.0.113.77', 28)).toBe('203.0.113.64/28');
    expect(addressKey('192.0.2.7', 32)).toBe('192.0.2.7');
    expect(addressKey('192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('2001:db8:1:2:aa::1', 24)).toBe('2001:db8:1:2::/64');
  });

  it('clients of one /24 share one cap; an address of it holding none gets one place of the reserve', async () => {
    await start(createHonoServer(app().fetch, { hostname: '127.0.0.1', limits: limits(64, 3) }));
    const admitted: boolean[] = [];
    for (const address of ['127.0.9.1', '127.0.9.1', '127.0.9.1', '127.0.9.1', '127.0.9.2', '127.0.9.2']) {
      admitted.push(await slow(address));
    }
    // 127.0.9.1 fills the /24's cap of 3; 127.0.9.2, holding none, comes in from the reserve, once.
    expect(admitted).toEqual([true, true, true, false, true, false]);
    expect(await served('127.0.10.1')).toBe(200);
  });

  it('what one /24 takes from the reserve never exceeds the reserve', async () => {
    // 8 in all, 2 per /24, the last 2 kept: six fresh addresses of one /24 get 2 + 2.
    await start(createHonoServer(app().fetch, { hostname: '127.0.0.1', limits: limits(8, 2) }));
    const admitted: boolean[] = [];
    for (let host = 1; host <= 6; host += 1) admitted.push(await slow(`127.0.8.${host}`));
    expect(admitted).toEqual([true, true, true, true, false, false]);
    expect(await served('127.0.11.1')).toBe(200);
  });

  it('serves a fifth address while four addresses of its own /24 hold as many slow connections as they may', async () => {
    await start(createHonoServer(app().fetch, { hostname: '127.0.0.1', limits: limits(16, 4) }));
    const holders = ['127.0.12.2', '127.0.12.3', '127.0.12.4', '127.0.12.5'];
    let admitted = 0;
    for (let round = 0; round < 6; round += 1) {
      for (const address of holders) if (await slow(address)) admitted += 1;
    }
    // The /24's cap (4) is all the holders get; the reserve (4) takes none of theirs.
    expect(admitted).toBe(4);
    expect(await served('127.0.12.6')).toBe(200);
  });

  it('serves a client on a fifth network while four hold as many slow connections as they may', async () => {
    // 16 connections in all, 4 per /24: without the reserve, four networks fill the server.
    await start(createHonoServer(app().fetch, { hostname: '127.0.0.1', limits: limits(16, 4) }));
    const networks = ['127.0.1.1', '127.0.2.1', '127.0.3.1', '127.0.4.1'];
    const admitted = new Map<string, number>();
    for (let round = 0; round < 6; round += 1) {
      for (const address of networks) {
        if (await slow(address)) admitted.set(address, (admitted.get(address) ?? 0) + 1);
      }
    }
    // The last quarter (4) is kept for clients holding none: the four stop at 12 together.
    expect([...admitted.values()]).toEqual([3, 3, 3, 3]);
    expect(seen.filter((connection) => !connection.admitted)).toHaveLength(12);
    expect(await served('127.0.5.1')).toBe(200);
    expect(await served('127.0.6.1')).toBe(200);
  });

  it('answers a refused connection 503 with Retry-After before any request is read', async () => {
    await start(createHonoServer(app().fetch, { hostname: '127.0.0.1', limits: limits(64, 1) }));
    expect(await slow('127.0.7.1')).toBe(true);
    const socket = connect({ port, host: '127.0.0.1', localAddress: '127.0.7.1' });
    clients.push(socket);
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    expect(text).toMatch(/^HTTP\/1\.1 503 /);
    expect(text).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(text).toMatch(/"code":"service_unavailable"/);
  });

  it('counts each address alone at ipv4PrefixLength 32, and refuses options that cannot hold', async () => {
    const plain = createServer((_request, response) => response.end('ok'));
    const cap = limitConnectionsPerAddress(plain, { maxPerAddress: 1, ipv4PrefixLength: 32 });
    await start(plain);
    expect(await slow('127.0.8.1')).toBe(true);
    expect(await slow('127.0.8.2')).toBe(true);
    expect(await slow('127.0.8.2')).toBe(false);
    expect(cap.openFrom('127.0.8.1')).toBe(1);
    expect(cap.open()).toBe(2);
    const refuse = (options: Parameters<typeof limitConnectionsPerAddress>[1]) => () =>
      limitConnectionsPerAddress(createServer(), options);
    expect(refuse({ maxPerAddress: 1, ipv4PrefixLength: 33 })).toThrow(RangeError);
    expect(refuse({ maxPerAddress: 1, maxConnections: 4, reserved: 4 })).toThrow(RangeError);
    expect(refuse({ maxPerAddress: 1, busyAt: 0 })).toThrow(RangeError);
  });
});
