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
 * Process stdout (file descriptor 1) as pino's asynchronous destination (sonic-boom): a record
 * is written off the request's path, and records that arrive while a write is in flight go out
 * together in the next one, so a busy server makes one `write(2)` per batch instead of a
 * blocking one per request, and a quiet one still shows each line at once. One per process,
 * flushed synchronously when the process exits, so a normal exit or `process.exit()` loses
 * nothing.
 */
function stdout(): DestinationStream {
  if (stdoutDestination) return stdoutDestination;
  const destination = pino.destination({ dest: 1, sync: false });
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
 * stdout is a terminal. Plain stdout is written asynchronously, so logging never blocks a
 * request on a pipe. Level from `HOLDFAST_LOG_LEVEL` (default `info`; `silent` under
 * `NODE_ENV=test` unless set). Records never carry API keys, secrets or bodies: callers log ids,
 * route templates, statuses and timings only, and `authorization` is redacted should it slip in.
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
  };
  if (out.isTTY) return pino(options, prettyDestination(out));
  return pino(options, out === process.stdout ? stdout() : (out as DestinationStream));
}
