/** The part of a Node `net.Socket` {@link withBackpressure} uses. */
export interface BackpressureSocket {
  readonly destroyed: boolean;
  /** Bytes written and not yet taken by the kernel. */
  readonly writableLength: number;
  pause(): unknown;
  resume(): unknown;
  destroy(): unknown;
  on(event: 'resume', listener: () => void): unknown;
}

/** The part of Node's `IncomingMessage` it uses. */
export interface BackpressureRequest {
  readonly socket: BackpressureSocket;
}

/** The part of Node's `ServerResponse` it uses. */
export interface BackpressureResponse {
  /** `null` while the response waits behind an earlier one of its connection. */
  readonly socket: BackpressureSocket | null;
  /** Bytes of this response not yet handed to its socket. */
  readonly writableLength: number;
  once(event: 'finish' | 'close', listener: () => void): unknown;
}

/** Options of {@link withBackpressure}. */
export interface BackpressureOptions {
  /**
   * Requests one connection may have unanswered at once: running, or answered but queued
   * behind an earlier answer the client has not taken yet. From half this many on (at least 2),
   * the connection is no longer read until the client takes its answers; a request read past
   * this many (it was already in the last read) closes the connection and never runs.
   * At least 2. @defaultValue 16
   */
  readonly maxPipelined?: number;
  /**
   * Bytes of answers one connection may hold unsent (in Node's buffers, not yet taken by the
   * kernel) while it has another request waiting: past this, the connection is no longer read
   * until the client takes its answers. A single answer larger than this is still sent whole.
   * @defaultValue 1 MiB
   */
  readonly maxUnsentBytes?: number;
}

/** What one connection holds. */
interface Connection {
  /** Responses of requests read and not yet finished, oldest first. */
  readonly unanswered: Set<BackpressureResponse>;
  /** Whether this guard stopped reading the connection. */
  paused: boolean;
}

/** The defaults of {@link BackpressureOptions}. */
export const backpressureDefaults: Required<BackpressureOptions> = {
  maxPipelined: 16,
  maxUnsentBytes: 1024 * 1024,
};

/**
 * Wraps a Node `request` listener so that no connection can queue more than a bounded number of
 * unanswered requests or unsent answer bytes. Node's HTTP server answers pipelined requests in
 * order, keeping every later answer in memory until the client has taken the earlier ones, and
 * its own pause does not hold: it looks only at answers already written when a request is
 * parsed (an asynchronous handler has written none yet), and its parser reads every request of
 * a read (up to 64 KiB, two thousand small requests) before pausing. One socket that pipelines
 * without reading thus ran the handler thousands of times and held every answer.
 *
 * Here each connection counts its unanswered requests. From half of `maxPipelined` (or past
 * `maxUnsentBytes` of unsent answers with another request waiting) the socket is paused (no
 * more bytes read, so no more requests parsed) until the client takes answers; a request parsed
 * while `maxPipelined` are unanswered (it came in the same read) destroys the connection without
 * running, and so do the rest of that read. Its memory goes with the socket.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * const server = createServer(withBackpressure((request, response) => response.end('ok'), { maxPipelined: 8 }));
 * ```
 */
export function withBackpressure<Request extends BackpressureRequest, Response extends BackpressureResponse>(
  listener: (request: Request, response: Response) => void,
  options: BackpressureOptions = {},
): (request: Request, response: Response) => void {
  const {
    maxPipelined = backpressureDefaults.maxPipelined,
    maxUnsentBytes = backpressureDefaults.maxUnsentBytes,
  } = options;
  if (!Number.isInteger(maxPipelined) || maxPipelined < 2) {
    throw new RangeError('maxPipelined must be an integer of at least 2');
  }
  if (!Number.isInteger(maxUnsentBytes) || maxUnsentBytes < 1) {
    throw new RangeError('maxUnsentBytes must be a positive integer');
  }
  // Pausing with one request unanswered could stall it: its body may still be unread.
  const pauseAt = Math.max(2, Math.ceil(maxPipelined / 2));
  const connections = new WeakMap<BackpressureSocket, Connection>();

  /** Answer bytes in Node's buffers: the socket's own, and those of answers queued behind it. */
  const unsentBytes = (socket: BackpressureSocket, connection: Connection): number => {
    let bytes = socket.writableLength;
    for (const response of connection.unanswered)
      if (response.socket === null) bytes += response.writableLength;
    return bytes;
  };
  const overloaded = (socket: BackpressureSocket, connection: Connection): boolean =>
    connection.unanswered.size >= pauseAt ||
    (connection.unanswered.size >= 2 && unsentBytes(socket, connection) > maxUnsentBytes);

  const connectionOf = (socket: BackpressureSocket): Connection => {
    const known = connections.get(socket);
    if (known) return known;
    const connection: Connection = { unanswered: new Set(), paused: false };
    connections.set(socket, connection);
    // Node resumes a socket itself (reading a request's body, or dumping an unread one): while
    // this guard holds it, it is paused again at once.
    socket.on('resume', () => {
      if (connection.paused) socket.pause();
    });
    return connection;
  };

  return (request, response) => {
    const socket = request.socket;
    // Closed below: the requests left in its last read are dropped unrun.
    if (socket.destroyed) return;
    const connection = connectionOf(socket);
    if (connection.unanswered.size >= maxPipelined) {
      socket.destroy();
      return;
    }
    connection.unanswered.add(response);
    const settle = () => {
      if (!connection.unanswered.delete(response)) return;
      if (connection.paused && !overloaded(socket, connection)) {
        connection.paused = false;
        socket.resume();
      }
    };
    response.once('finish', settle);
    response.once('close', settle);
    if (!connection.paused && overloaded(socket, connection)) {
      connection.paused = true;
      socket.pause();
    }
    listener(request, response);
  };
}
