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
  /** Open connections one client (an address group, see `ipv4PrefixLength`) may hold at once; the next is refused. */
  readonly maxPerAddress: number;
  /**
   * IPv4 clients are counted by this prefix, as IPv6 ones are by their /64: one host or network
   * often holds many addresses of one /24, and would otherwise get a cap per address. 32 counts
   * each address alone. @defaultValue 24
   */
  readonly ipv4PrefixLength?: number;
  /**
   * The server's whole connection budget (`server.maxConnections`). With it, the last `reserved`
   * connections are kept for clients holding fewer than `busyAt`: once the server holds
   * `maxConnections - reserved`, a new connection from a client already holding `busyAt` or
   * more is refused, so a few clients together cannot fill the server. An address that itself
   * holds fewer than `busyAt` is admitted from the reserve even where its network is at its cap
   * (a fresh client beside a busy one on the same /24); such admissions together never exceed
   * `reserved`. Absent: no reserve.
   */
  readonly maxConnections?: number;
  /** Connections kept for clients holding few. @defaultValue a quarter of `maxConnections` */
  readonly reserved?: number;
  /** Connections from which a client counts as holding many. @defaultValue `maxPerAddress / 16`, at least 1 */
  readonly busyAt?: number;
  /** Header that carries the request id. @defaultValue `'Request-Id'` */
  readonly requestIdHeader?: string;
  /** Request id generator. @defaultValue `newRequestId` of this package */
  readonly generateRequestId?: () => string;
  /** The service's base of problem `type` URIs. @defaultValue relative `/problems/` */
  readonly typeBase?: string | undefined;
}

/** What {@link limitConnectionsPerAddress} reports: the open connections of an address. */
export interface AddressCap {
  /** Connections now open from the address's group (its IPv4 prefix or IPv6 /64), refused ones not counted. */
  openFrom(address: string): number;
  /** Connections now open in all, refused ones not counted. */
  open(): number;
}

/**
 * The key connections are counted under: an IPv4 address (an IPv4-mapped IPv6 one included) by
 * its first `ipv4PrefixLength` bits (all 32 by default: the address itself), an IPv6 address by
 * its /64, the smallest prefix a single host is usually given (RFC 6177): counting each IPv6
 * address alone would let one host open a connection per address.
 *
 * @example
 * ```ts
 * addressKey('::ffff:192.0.2.7'); // '192.0.2.7'
 * addressKey('192.0.2.7', 24); // '192.0.2.0/24'
 * addressKey('2001:db8:1:2:aa::1'); // '2001:db8:1:2::/64'
 * ```
 */
export function addressKey(address: string, ipv4PrefixLength = 32): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  const ipv4 = mapped?.[1] ?? (address.includes(':') ? undefined : address);
  if (ipv4 !== undefined) return ipv4Prefix(ipv4, ipv4PrefixLength);
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

/** `address` as its first `length` bits, `a.b.c.d/length`; itself at 32 or when it is not dotted IPv4. */
function ipv4Prefix(address: string, length: number): string {
  if (length >= 32) return address;
  const octets = address.split('.').map(Number);
  if (octets.length !== 4 || octets.some((octet) => !Number.isInteger(octet) || octet < 0 || octet > 255)) {
    return address;
  }
  const value = octets.reduce((sum, octet) => sum * 256 + octet, 0);
  const size = 2 ** (32 - length);
  const network = Math.floor(value / size) * size;
  const parts = [24, 16, 8, 0].map((shift) => Math.floor(network / 2 ** shift) % 256);
  return `${parts.join('.')}/${length}`;
}

/**
 * Caps the connections one client address holds at once, so that no address can take the
 * whole of `server.maxConnections` (idle sockets cost nothing to open and hold every slot). A
 * connection over its address's cap is answered at once with 503 `service_unavailable`
 * problem+json (`Retry-After: 1`, a fresh `Request-Id`, `Connection: close`), written before
 * any request is read, and closed: it leaves its slot at once and never reaches a framework.
 * Counts are per IPv4 /24 (`ipv4PrefixLength`) and per IPv6 /64 ({@link addressKey}). With
 * `maxConnections`, the last quarter of the server's budget (`reserved`) goes only to clients
 * holding few connections (under `busyAt`), so that four clients at their cap cannot fill a
 * server of four caps and lock everyone else out; an address holding few is served from that
 * reserve even when its own /24 is full. Behind a reverse proxy every connection comes
 * from the proxy: cap connections per real client at the proxy, and here set `maxPerAddress` to
 * the proxy's own connection limit.
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
  const {
    maxPerAddress,
    ipv4PrefixLength = 24,
    maxConnections,
    requestIdHeader = 'Request-Id',
    generateRequestId = newRequestId,
  } = options;
  const positive = (value: number, name: string) => {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  };
  positive(maxPerAddress, 'maxPerAddress');
  if (!Number.isInteger(ipv4PrefixLength) || ipv4PrefixLength < 0 || ipv4PrefixLength > 32) {
    throw new RangeError('ipv4PrefixLength must be an integer from 0 to 32');
  }
  if (maxConnections !== undefined) positive(maxConnections, 'maxConnections');
  const reserved = options.reserved ?? (maxConnections === undefined ? 0 : Math.floor(maxConnections / 4));
  const busyAt = options.busyAt ?? Math.max(1, Math.ceil(maxPerAddress / 16));
  if (
    !Number.isInteger(reserved) ||
    reserved < 0 ||
    (maxConnections !== undefined && reserved >= maxConnections)
  ) {
    throw new RangeError('reserved must be an integer from 0 to under maxConnections');
  }
  positive(busyAt, 'busyAt');
  // From this many open connections on, only clients holding fewer than busyAt are admitted.
  const reserveFrom =
    maxConnections === undefined || reserved === 0 ? Number.POSITIVE_INFINITY : maxConnections - reserved;
  const open = new Map<string, number>();
  // Connections per address itself (IPv4 alone, IPv6 by /64 as above): an address holding few
  // may use the reserve even where its network is full, so a fresh client beside a busy one on
  // the same /24 is still served. Such admissions together never exceed the reserve.
  const exact = new Map<string, number>();
  let total = 0;
  let admittedFromReserve = 0;
  server.on('connection', (socket) => {
    // Node gives no address for a socket already closed: there is nothing to count or refuse.
    if (socket.remoteAddress === undefined) return;
    const key = addressKey(socket.remoteAddress, ipv4PrefixLength);
    const own = addressKey(socket.remoteAddress);
    const count = open.get(key) ?? 0;
    const ownCount = exact.get(own) ?? 0;
    const byGroup =
      count >= maxPerAddress
        ? `Your network already holds ${maxPerAddress} open connections, the most one client may.`
        : total >= reserveFrom && count >= busyAt
          ? `The server is near its connection limit, and the rest is kept for clients holding fewer than ${busyAt}; your network holds ${count}.`
          : undefined;
    const fromReserve =
      byGroup !== undefined &&
      ownCount < busyAt &&
      admittedFromReserve < reserved &&
      (maxConnections === undefined || total < maxConnections);
    const refusal = fromReserve ? undefined : byGroup;
    if (refusal !== undefined) {
      const problem = holdfastProblems.create('service_unavailable', {
        detail: `${refusal} Reuse your open connections, or retry once one has closed.`,
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
    exact.set(own, ownCount + 1);
    total += 1;
    if (fromReserve) admittedFromReserve += 1;
    socket.once('close', () => {
      total -= 1;
      if (fromReserve) admittedFromReserve -= 1;
      release(open, key);
      release(exact, own);
    });
  });
  return { openFrom: (address) => open.get(addressKey(address, ipv4PrefixLength)) ?? 0, open: () => total };
}

function release(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
