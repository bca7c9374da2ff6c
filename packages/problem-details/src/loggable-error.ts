// What a log may keep of an error. A driver's error carries the failing row and the query's
// parameters (postgres.js: `detail`, `parameters`), which are request data, and parsers quote
// the text they failed on: none of it belongs in a log.

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

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 ? value : undefined;

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

/**
 * The error as one line for stderr, `Type (code): message`, then its frames unless `frames` is
 * false: what {@link loggableError} keeps, and nothing else.
 *
 * @example
 * ```ts
 * console.error(`request failed: ${errorLine(error)}`);
 * ```
 */
export function errorLine(error: unknown, frames = true): string {
  const logged = loggableError(error);
  const head = `${logged.type}${logged.code === undefined ? '' : ` (${logged.code})`}: ${logged.message}`;
  return !frames || logged.stack === undefined ? head : `${head}\n${logged.stack}`;
}
