/**
 * What a database failure means for the client: `unavailable` (the database cannot be reached
 * or dropped the connection: retry after a few seconds), `timed_out` (a statement or lock
 * timeout: the database is slow, not down), or `undefined` for anything else (a bug: 500).
 */
export type DatabaseFailure = 'unavailable' | 'timed_out';

// postgres.js's own codes for a connection that ended, closed, was destroyed or never opened,
// and the socket errors under them.
const CONNECTION_CODES = new Set([
  'CONNECTION_ENDED',
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  // Node's, for a write to a socket the server already closed.
  'ERR_STREAM_DESTROYED',
  'ERR_STREAM_WRITE_AFTER_END',
  'ERR_SOCKET_CLOSED',
]);

// SQLSTATEs (PostgreSQL, appendix A) of a server that is going away, starting or full.
const UNAVAILABLE_STATES = new Set([
  '57P01', // admin_shutdown: the backend was terminated (pg_terminate_backend, a fast shutdown)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or in recovery
  '57P05', // idle_session_timeout
  '25P03', // idle_in_transaction_session_timeout
  '53300', // too_many_connections
  '53400', // configuration_limit_exceeded
  '58030', // io_error
  // Transient by definition: the transaction was rolled back whole, and the same request
  // succeeds when sent again.
  '40P01', // deadlock_detected
  '40001', // serialization_failure
]);

const TIMEOUT_STATES = new Set([
  '57014', // query_canceled: statement_timeout
  '55P03', // lock_not_available: lock_timeout
]);

// node-postgres (pg, pg-pool) raises a plain Error without a code for a connection it lost or
// could not get: these messages, fixed in its source, are its only mark.
const CONNECTION_MESSAGES = [
  'Connection terminated unexpectedly', // the server closed the socket (terminated backend, stop)
  'Connection terminated', // the client ended under a query (also '... due to connection timeout')
  'timeout exceeded when trying to connect', // pg-pool: no connection within connectionTimeoutMillis
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool', // a request that outlived shutdown
  'Query read timeout', // pg's query_timeout: the server stopped answering
];

function messageFailure(error: unknown): DatabaseFailure | undefined {
  if (!(error instanceof Error) || codeOf(error) !== undefined) return undefined;
  const { message } = error;
  return CONNECTION_MESSAGES.some((known) => message.startsWith(known)) ? 'unavailable' : undefined;
}

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

function classify(code: string | undefined): DatabaseFailure | undefined {
  if (code === undefined) return undefined;
  if (TIMEOUT_STATES.has(code)) return 'timed_out';
  // Class 08, connection exception: 08000, 08003, 08006, 08001, 08004, 08P01...
  if (CONNECTION_CODES.has(code) || UNAVAILABLE_STATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))
    return 'unavailable';
  return undefined;
}

// An error that carries an HTTP status below 500 (an RFC 9457 problem built from a lost lease,
// say) is already the client's answer, whatever caused it.
function isClientAnswer(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || !('status' in error)) return false;
  return typeof error.status === 'number' && error.status >= 400 && error.status < 500;
}

/**
 * The one classifier of database failures, for a crash converter (503 with Retry-After
 * instead of 500): postgres.js connection codes, node-postgres's connection messages (it gives
 * those no code), socket errors, SQLSTATE class 08 and the
 * shutdown, start-up and capacity states, statement and lock timeouts. An error that wraps
 * another (`cause`, as a rethrow or a problem built from it does) or gathers several
 * (`AggregateError`, as a connection tried on IPv4 and IPv6 does) is judged by what it holds;
 * an error with a `status` from 400 to 499 (a client problem) is its own answer, whatever
 * caused it.
 *
 * @example
 * ```ts
 * databaseFailure(Object.assign(new Error('terminating connection'), { code: '57P01' })); // 'unavailable'
 * databaseFailure(new TypeError('x')); // undefined
 * ```
 */
export function databaseFailure(error: unknown): DatabaseFailure | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  // Bounded: a cause chain or a nest of aggregates never makes this walk long.
  while (queue.length > 0 && seen.size < 16) {
    const current = queue.shift();
    if (seen.has(current)) continue;
    seen.add(current);
    if (isClientAnswer(current)) return undefined;
    const found = classify(codeOf(current)) ?? messageFailure(current);
    if (found) return found;
    if (current instanceof AggregateError) queue.push(...current.errors);
    if (current instanceof Error && current.cause !== undefined) queue.push(current.cause);
  }
  return undefined;
}
