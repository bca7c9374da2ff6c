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

/** What a log record keeps of an error: enough to find the fault, nothing of the data. */
export interface LoggedError {
  readonly type: string;
  readonly message: string;
  /** SQLSTATE for a database error, or the error's own `code`. */
  readonly code?: string;
  readonly table?: string;
  readonly column?: string;
  readonly constraint?: string;
  readonly routine?: string;
  /** The call frames only: the first line of a stack repeats the message. */
  readonly stack?: string;
}

const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : undefined);

/**
 * An error as logs may carry it. A PostgreSQL error (postgres.js `PostgresError`) keeps its
 * SQLSTATE, table, column, constraint and routine, and drops `detail` ("Failing row contains
 * (...)": the row, body bytes included), `where`, `hint`, `query` and `parameters`; its message is
 * withheld too in class 22 (data exceptions quote the offending value: `invalid input syntax for
 * type integer: "..."`). A `SyntaxError`'s message is withheld (JSON.parse quotes the text it
 * failed on). Anything else keeps its name, message (cut to 300 characters), `code` and frames,
 * never its other properties or its cause.
 *
 * @example
 * ```ts
 * log.error({ err: loggableError(error), requestId }, 'request failed');
 * ```
 */
export function loggableError(error: unknown): LoggedError {
  if (!(error instanceof Error))
    return { type: typeof error, message: '(a thrown value that is not an Error)' };
  const fields = error as Error & Record<string, unknown>;
  const code = text(fields.code);
  const frames = (error.stack ?? '')
    .split('\n')
    .filter((line) => line.startsWith('    at '))
    .join('\n');
  const stack = frames.length > 0 ? { stack: frames } : {};
  const postgres =
    error.name === 'PostgresError' ||
    (code !== undefined && /^[0-9A-Z]{5}$/.test(code) && 'severity' in fields);
  if (postgres) {
    const table = text(fields.table_name);
    const column = text(fields.column_name);
    const constraint = text(fields.constraint_name);
    const routine = text(fields.routine);
    return {
      type: error.name,
      message: code?.startsWith('22')
        ? `(withheld: a data exception quotes the value, SQLSTATE ${code})`
        : error.message.slice(0, 300),
      ...(code === undefined ? {} : { code }),
      ...(table === undefined ? {} : { table }),
      ...(column === undefined ? {} : { column }),
      ...(constraint === undefined ? {} : { constraint }),
      ...(routine === undefined ? {} : { routine }),
      ...stack,
    };
  }
  return {
    type: error.name,
    message:
      error instanceof SyntaxError
        ? '(withheld: a parser quotes the text it failed on)'
        : error.message.slice(0, 300),
    ...(code === undefined ? {} : { code }),
    ...stack,
  };
}

/** The error for stderr: `Type (code): message`, then the frames unless `frames` is false. */
export function errorLine(error: unknown, frames = true): string {
  const logged = loggableError(error);
  const head = `${logged.type}${logged.code === undefined ? '' : ` (${logged.code})`}: ${logged.message}`;
  return !frames || logged.stack === undefined ? head : `${head}\n${logged.stack}`;
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
