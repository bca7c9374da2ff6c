import { holdfastProblems } from '@holdfast/problem-details';
import { newRequestId } from './opaque-id';
import { rawProblemResponse } from './raw-response';

/** The part of a `net.Socket` {@link limitConnectionsPerAddress} uses. */
export interface AddressedSocket {
  readonly remoteAddress?: string | undefined;
  end(data: string): unknown;
  destroy(): unknown;
  once(event: 'close', listener: () => void): unknown;
}

/** The part of a Node `net.Server` (`http.Server`, `https.Server`) it listens on. */
export interface ConnectionServer {
  on(event: 'connection', listener: (socket: AddressedSocket) => void): unknown;
}

/** Options of {@link limitConnectionsPerAddress}. */
export interface AddressCapOptions {
  /** Open connections one address may hold at once; the next is refused. */
  readonly maxPerAddress: number;
  /** Header that carries the request id. @defaultValue `'Request-Id'` */
  readonly requestIdHeader?: string;
  /** Request id generator. @defaultValue `newRequestId` of this package */
  readonly generateRequestId?: () => string;
  /** The service's base of problem `type` URIs. @defaultValue relative `/problems/` */
  readonly typeBase?: string | undefined;
}

/** What {@link limitConnectionsPerAddress} reports: the open connections of an address. */
export interface AddressCap {
  /** Connections now open from the address (or its IPv6 /64), refused ones not counted. */
  openFrom(address: string): number;
}

/**
 * The key connections are counted under: an IPv4 address (an IPv4-mapped IPv6 one included) as
 * itself, an IPv6 address by its /64, the smallest prefix a single host is usually given (RFC
 * 6177): counting each IPv6 address alone would let one host open a connection per address.
 *
 * @example
 * ```ts
 * addressKey('::ffff:192.0.2.7'); // '192.0.2.7'
 * addressKey('2001:db8:1:2:aa::1'); // '2001:db8:1:2::/64'
 * ```
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped?.[1]) return mapped[1];
  if (!address.includes(':')) return address;
  const [bare = ''] = address.split('%', 1);
  const [head = '', tail] = bare.split('::');
  const left = head === '' ? [] : head.split(':');
  // An embedded IPv4 tail (`::a.b.c.d`) fills the last two groups, never the first four.
  const right =
    tail === undefined || tail === ''
      ? []
      : tail.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]));
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  const prefix = groups.slice(0, 4).map((g) => Number.parseInt(g || '0', 16).toString(16));
  return `${prefix.join(':')}::/64`;
}

/**
 * Caps the connections one client address holds at once, so that no address can take the
 * whole of `server.maxConnections` (idle sockets cost nothing to open and hold every slot). A
 * connection over its address's cap is answered at once with 503 `service_unavailable`
 * problem+json (`Retry-After: 1`, a fresh `Request-Id`, `Connection: close`), written before
 * any request is read, and closed: it leaves its slot at once and never reaches a framework.
 * Counts are per IPv4 address and per IPv6 /64 ({@link addressKey}); behind a reverse proxy every
 * connection comes from the proxy, so set the cap to the proxy's own connection limit there.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * const server = createServer(handler);
 * server.maxConnections = 1024;
 * limitConnectionsPerAddress(server, { maxPerAddress: 256 });
 * ```
 */
export function limitConnectionsPerAddress(server: ConnectionServer, options: AddressCapOptions): AddressCap {
  const { maxPerAddress, requestIdHeader = 'Request-Id', generateRequestId = newRequestId } = options;
  if (!Number.isInteger(maxPerAddress) || maxPerAddress < 1) {
    throw new RangeError('maxPerAddress must be a positive integer');
  }
  const open = new Map<string, number>();
  server.on('connection', (socket) => {
    // Node gives no address for a socket already closed: there is nothing to count or refuse.
    if (socket.remoteAddress === undefined) return;
    const key = addressKey(socket.remoteAddress);
    const count = open.get(key) ?? 0;
    if (count >= maxPerAddress) {
      const problem = holdfastProblems.create('service_unavailable', {
        detail: `This address already holds ${maxPerAddress} open connections, the most one address may. Reuse them, or retry once one has closed.`,
        retryAfter: 1,
      });
      // The answer fits a fresh socket's send buffer, so it is on the wire before destroy()
      // closes the descriptor; destroying now (rather than waiting for the client to close)
      // gives the slot back at once.
      socket.end(
        rawProblemResponse(problem, {
          header: requestIdHeader,
          requestId: generateRequestId(),
          typeBase: options.typeBase,
        }),
      );
      socket.destroy();
      return;
    }
    open.set(key, count + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left > 0) open.set(key, left);
      else open.delete(key);
    });
  });
  return { openFrom: (address) => open.get(addressKey(address)) ?? 0 };
}
