import { loggableError } from '@holdfast/problem-details';
import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger } from 'pino';

const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/**
 * One line per record for a person at a terminal: time, level, message, then the request's
 * fields. A dozen lines instead of `pino-pretty` and its dependencies: the JSON stays the format
 * for machines, this only has to be readable.
 */
function prettyDestination(out: NodeJS.WritableStream): DestinationStream {
  return {
    write(line: string) {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line) as Record<string, unknown>;
      } catch {
        out.write(line);
        return;
      }
      const { time, level, msg, pid: _pid, hostname: _hostname, ...rest } = record;
      const when = typeof time === 'number' ? new Date(time).toISOString().slice(11, 23) : '';
      const fields = Object.entries(rest)
        .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join(' ');
      out.write(`${when} ${LEVEL_NAMES[Number(level)] ?? level} ${String(msg ?? '')} ${fields}\n`);
    },
  };
}

let stdoutDestination: DestinationStream | undefined;

/**
 * Process stdout (file descriptor 1) as pino's asynchronous destination (sonic-boom): records
 * are gathered in memory and written off the request's path once 4 KiB are waiting, or every
 * 100 ms, so a busy server makes one `write(2)` per twenty-odd lines and a quiet one shows each
 * line within 100 ms. Writing each line as it came (one asynchronous write per request, through
 * libuv's thread pool) cost about 40 µs of CPU per request, a tenth of a `GET /v1/orders`
 * (bench/server). One per process, flushed synchronously when the process exits, so a normal
 * exit or `process.exit()` loses nothing; a SIGKILL loses at most the last 100 ms of lines.
 */
function stdout(): DestinationStream {
  if (stdoutDestination) return stdoutDestination;
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 100 });
  process.once('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // Nothing more can be done while exiting (stdout closed, or still opening).
    }
  });
  stdoutDestination = destination;
  return destination;
}

/**
 * The server's logger: JSON lines (pino) on stdout, one line per record, pretty-printed when
 * stdout is a terminal. Plain stdout is written asynchronously in batches (within 100 ms), so
 * logging never blocks a request on a pipe. Level from `HOLDFAST_LOG_LEVEL` (default `info`; `silent` under
 * `NODE_ENV=test` unless set). Records never carry API keys, secrets or bodies: callers log ids,
 * route templates, statuses and timings only, `authorization` is redacted should it slip in, and
 * an `err` goes through {@link loggableError} (no database row detail, query or parameters).
 *
 * @example
 * ```ts
 * const log = createLogger(process.env);
 * log.info({ requestId, route: '/v1/orders/:id', status: 200, latencyMs: 3 }, 'request');
 * ```
 */
export function createLogger(
  env: Readonly<Record<string, string | undefined>>,
  out: NodeJS.WritableStream & { isTTY?: boolean } = process.stdout,
): Logger {
  const level = env.HOLDFAST_LOG_LEVEL || (env.NODE_ENV === 'test' ? 'silent' : 'info');
  const options = {
    level,
    base: { pid: process.pid },
    redact: { paths: ['authorization', 'headers.authorization', 'secret', 'key'], censor: '[redacted]' },
    // Whatever is logged as `err`, pino's default would copy every property: a database error's
    // row detail and query parameters included.
    serializers: { err: loggableError },
  };
  if (out.isTTY) return pino(options, prettyDestination(out));
  return pino(options, out === process.stdout ? stdout() : (out as DestinationStream));
}
