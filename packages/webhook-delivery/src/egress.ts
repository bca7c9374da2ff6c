import { createHash } from 'node:crypto';
import { createServer, isIP, connect as netConnect, type Socket } from 'node:net';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { type DestinationOptions, forbiddenAddress, pinnedAgent, privateHosts, systemResolver } from './ssrf';

/**
 * Where deliveries leave from, so receivers can allowlist the sender: either local addresses of
 * this host to bind every delivery connection to (the same one for an endpoint while the list is
 * unchanged), or an HTTP CONNECT egress proxy (such as Stripe's Smokescreen) with the CIDR ranges
 * it sends from. Never both.
 */
export type EgressOptions =
  | { readonly addresses: readonly string[]; readonly proxy?: undefined; readonly ranges?: undefined }
  | { readonly proxy: string; readonly ranges: readonly string[]; readonly addresses?: undefined };

/** A refused egress setting: an address that is not an IP or cannot be bound, both modes at once, ... */
export class EgressError extends Error {
  override name = 'EgressError';
}

type ParsedEgress =
  | { kind: 'bind'; v4: string[]; v6: string[] }
  | { kind: 'proxy'; proxy: URL; ranges: string[] };

function normalizeAddress(raw: string): string {
  const text = raw.trim();
  if (!ipaddr.isValid(text) || isIP(text) === 0) {
    throw new EgressError(`egress address "${raw}" is not an IPv4 or IPv6 address`);
  }
  const parsed = ipaddr.parse(text);
  return parsed.kind() === 'ipv6' ? (parsed as ipaddr.IPv6).toRFC5952String() : parsed.toString();
}

function parseEgress(options: EgressOptions): ParsedEgress {
  const { addresses, proxy, ranges } = options;
  if (addresses !== undefined && proxy !== undefined) {
    throw new EgressError('set either egress addresses or an egress proxy, not both');
  }
  if (addresses !== undefined) {
    if (addresses.length === 0) throw new EgressError('egress addresses: the list is empty');
    const unique = [...new Set(addresses.map(normalizeAddress))].sort();
    return {
      kind: 'bind',
      v4: unique.filter((a) => !a.includes(':')),
      v6: unique.filter((a) => a.includes(':')),
    };
  }
  if (proxy === undefined) throw new EgressError('egress: give addresses or a proxy');
  let url: URL;
  try {
    url = new URL(proxy);
  } catch {
    throw new EgressError(`egress proxy "${proxy}" is not a URL`);
  }
  if (url.protocol !== 'http:' || url.hostname === '' || (url.pathname !== '/' && url.pathname !== '')) {
    throw new EgressError(`egress proxy "${url.origin}" must be http://host:port`);
  }
  const list = (ranges ?? []).map((range) => range.trim());
  if (list.length === 0) throw new EgressError('egress proxy: give the ranges it sends from');
  for (const range of list) {
    if (!ipaddr.isValidCIDR(range)) throw new EgressError(`egress range "${range}" is not a CIDR range`);
  }
  return { kind: 'proxy', proxy: url, ranges: list };
}

/**
 * The ranges deliveries leave from, to publish for receivers' allowlists: bound addresses as
 * `/32` or `/128`, a proxy's ranges as given; `[]` without egress. Throws {@link EgressError} on
 * a malformed setting.
 */
export function egressSourceRanges(options: EgressOptions | undefined): string[] {
  if (options === undefined) return [];
  const parsed = parseEgress(options);
  if (parsed.kind === 'proxy') return [...parsed.ranges];
  return [...parsed.v4.map((a) => `${a}/32`), ...parsed.v6.map((a) => `${a}/128`)];
}

function bindable(address: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new EgressError(`egress address ${address} cannot be bound: ${error.code ?? error.message}`)),
    );
    server.listen(0, address, () => server.close(() => resolve()));
  });
}

/**
 * Checks an egress setting before any delivery: well formed, not both modes, and every address
 * bindable on this host (tried with a listening socket). Throws {@link EgressError} naming the
 * first address refused.
 */
export async function checkEgress(options: EgressOptions): Promise<void> {
  const parsed = parseEgress(options);
  if (parsed.kind === 'bind') for (const address of [...parsed.v4, ...parsed.v6]) await bindable(address);
}

/** Rendezvous hashing: the same address for a key while the list holds it, few moves when it changes. */
function pick(key: string, addresses: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const address of addresses) {
    const score = createHash('sha256').update(`${key}\n${address}`).digest().readUIntBE(0, 6);
    if (score > bestScore) {
      best = address;
      bestScore = score;
    }
  }
  return best;
}

const forbiddenError = (why: string) =>
  Object.assign(new Error(`destination forbidden: ${why}`), { code: 'EFORBIDDEN' });

/** Resolves and checks a destination at connection time: the socket goes to exactly these addresses. */
async function pinnedAddresses(hostname: string, destination: DestinationOptions): Promise<string[]> {
  const addresses = isIP(hostname) ? [hostname] : await (destination.resolve ?? systemResolver)(hostname);
  if (addresses.length === 0) {
    throw Object.assign(new Error(`${hostname} has no addresses`), { code: 'ENOTFOUND' });
  }
  if (!destination.allowPrivateDestinations && !privateHosts(destination).has(hostname)) {
    for (const address of addresses) {
      const why = forbiddenAddress(address);
      if (why) throw forbiddenError(why);
    }
  }
  return addresses;
}

const authority = (address: string, port: number) =>
  address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;

const MAX_PROXY_HEADER = 16 * 1024;

/** Opens a tunnel through an HTTP CONNECT proxy to exactly `address:port` (never a host name). */
function tunnel(proxy: URL, address: string, port: number, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const proxyPort = Number(proxy.port || 80);
    const socket = netConnect({ host: proxy.hostname.replace(/^\[|\]$/g, ''), port: proxyPort });
    let received = Buffer.alloc(0);
    let settled = false;
    // Stays listening once the tunnel is handed over (undici adds its own listener): an error
    // in between must not be unhandled.
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      reject(error);
    };
    socket.setTimeout(timeoutMs, () =>
      fail(Object.assign(new Error('egress proxy did not answer CONNECT in time'), { code: 'ETIMEDOUT' })),
    );
    socket.on('error', fail);
    socket.once('connect', () => {
      const target = authority(address, port);
      const credentials =
        proxy.username || proxy.password
          ? `Proxy-Authorization: Basic ${Buffer.from(
              `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`,
            ).toString('base64')}\r\n`
          : '';
      socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${credentials}\r\n`);
    });
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end === -1) {
        if (received.length > MAX_PROXY_HEADER) fail(new Error('egress proxy answer too long'));
        return;
      }
      socket.off('data', onData);
      socket.setTimeout(0);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(received.subarray(0, end).toString('latin1'))?.[1];
      if (status === undefined || !status.startsWith('2')) {
        fail(
          Object.assign(new Error(`egress proxy refused CONNECT: ${status ?? 'no HTTP status'}`), {
            code: 'EPROXY',
          }),
        );
        return;
      }
      const rest = received.subarray(end + 4);
      if (rest.length > 0) socket.unshift(rest);
      socket.setNoDelay(true);
      settled = true;
      resolve(socket);
    };
    socket.on('data', onData);
  });
}

function secure(socket: Socket, servername: string | undefined): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const tls = tlsConnect({
      socket,
      ...(servername ? { servername } : {}),
      ALPNProtocols: ['http/1.1'],
    });
    tls.once('secureConnect', () => resolve(tls));
    // Kept once connected (a later reject is a no-op): an error before undici listens is handled.
    tls.on('error', reject);
  });
}

type Route = { kind: 'bind'; v4: string | undefined; v6: string | undefined } | { kind: 'proxy'; proxy: URL };

/**
 * An undici connector that resolves and checks the destination itself, then connects to the
 * checked address only: bound to the route's local address of the same family, or through the
 * proxy with `CONNECT <address>:<port>`. TLS keeps the URL's host name for SNI and the
 * certificate check.
 */
function pinnedConnector(
  destination: DestinationOptions,
  route: Route,
  timeoutMs: number,
): buildConnector.connector {
  const direct = buildConnector({ timeout: timeoutMs });
  return (options, callback) => {
    let called = false;
    const done: buildConnector.Callback = (...args) => {
      if (called) return;
      called = true;
      callback(...args);
    };
    const servername = options.servername || (isIP(options.hostname) ? undefined : options.hostname);
    const https = options.protocol === 'https:';
    const port = Number(options.port || (https ? 443 : 80));
    pinnedAddresses(options.hostname, destination)
      .then(async (addresses) => {
        if (route.kind === 'bind') {
          const choice = addresses
            .map((address) => ({ address, local: address.includes(':') ? route.v6 : route.v4 }))
            .find((c) => c.local !== undefined);
          if (!choice) {
            const families = route.v4 ? 'IPv4' : 'IPv6';
            throw Object.assign(new Error(`${options.hostname} has no ${families} address to send from`), {
              code: 'EADDRFAMILY',
            });
          }
          direct(
            {
              ...options,
              hostname: choice.address,
              ...(servername ? { servername } : {}),
              localAddress: choice.local ?? null,
            },
            done,
          );
          return;
        }
        const [address] = addresses;
        if (address === undefined) throw new Error(`${options.hostname} has no addresses`);
        const socket = await tunnel(route.proxy, address, port, timeoutMs);
        if (!https) {
          done(null, socket);
          return;
        }
        try {
          done(null, await secure(socket, servername));
        } catch (error) {
          socket.destroy();
          throw error;
        }
      })
      .catch((error: unknown) => done(error instanceof Error ? error : new Error(String(error)), null));
  };
}

/** The dispatchers a worker sends through: one per route, the route picked by a key (the endpoint). */
export interface DeliveryDispatchers {
  /** The dispatcher for a key: with bound addresses, the same local address for a key while the list is unchanged. */
  for(key: string): Dispatcher;
  /** Resolves once the egress setting is checked (addresses bindable); `undefined` when nothing needs checking. */
  readonly ready: Promise<void> | undefined;
  close(): Promise<void>;
}

/**
 * The delivery dispatchers for a destination policy and an optional egress. Without egress: one
 * {@link pinnedAgent}. With egress, every connection is resolved, checked and pinned by the sender
 * before it leaves through the bound address or the proxy. Throws {@link EgressError} at once on a
 * malformed setting; `ready` rejects when an address cannot be bound.
 */
export function deliveryDispatchers(
  options: DestinationOptions & { connectTimeoutMs?: number; egress?: EgressOptions | undefined },
): DeliveryDispatchers {
  const timeoutMs = options.connectTimeoutMs ?? 10_000;
  const destination: DestinationOptions = {
    ...(options.allowPrivateDestinations !== undefined
      ? { allowPrivateDestinations: options.allowPrivateDestinations }
      : {}),
    ...(options.privateUrlPrefixes ? { privateUrlPrefixes: options.privateUrlPrefixes } : {}),
    ...(options.resolve ? { resolve: options.resolve } : {}),
  };
  if (!options.egress) {
    const agent = pinnedAgent({ ...destination, connectTimeoutMs: timeoutMs });
    return { for: () => agent, ready: undefined, close: () => agent.close() };
  }
  const parsed = parseEgress(options.egress);
  const agents = new Map<string, Agent>();
  const agentFor = (name: string, route: Route) => {
    let agent = agents.get(name);
    if (!agent) {
      agent = new Agent({ connect: pinnedConnector(destination, route, timeoutMs) });
      agents.set(name, agent);
    }
    return agent;
  };
  const ready = parsed.kind === 'bind' ? checkEgress(options.egress) : Promise.resolve();
  // Awaited by the worker; kept from being an unhandled rejection until then.
  ready.catch(() => {});
  return {
    for(key) {
      if (parsed.kind === 'proxy') return agentFor('proxy', { kind: 'proxy', proxy: parsed.proxy });
      const v4 = pick(key, parsed.v4);
      const v6 = pick(key, parsed.v6);
      return agentFor(`${v4 ?? ''}|${v6 ?? ''}`, { kind: 'bind', v4, v6 });
    },
    ready,
    async close() {
      await Promise.all([...agents.values()].map((agent) => agent.close()));
    },
  };
}
