import type { Context, ErrorHandler, MiddlewareHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Router } from 'hono/router';
import type { RouterRoute } from 'hono/types';
import { type HoldfastProblemCode, problem } from './catalogue';
import { nestedDeeperThan } from './depth';
import { fromUnknown } from './from-unknown';
import type { ProblemContext, ProblemError } from './problem-error';
import { newRequestId } from './request-id';
import { type TextIssue, wellFormedJson } from './text';

declare module 'hono' {
  interface ContextVariableMap {
    /** Set by `requestId()`: the id sent as `Request-Id` and rendered in problem bodies. */
    requestId: string;
    /** Set by `jsonBody()`: the parsed request body, or `undefined` when there was none. */
    jsonBody: unknown;
  }
}

export { newRequestId };

/**
 * `instance` and `requestId` for a problem raised while handling `c`.
 *
 * @example
 * ```ts
 * return problem('not_found').toResponse(problemContext(c));
 * ```
 */
export function problemContext(c: Context): ProblemContext {
  const requestId: string | undefined = c.get('requestId');
  return { instance: c.req.path, ...(requestId === undefined ? {} : { requestId }) };
}

/**
 * Renders `problem` as the response to `c`.
 *
 * @example
 * ```ts
 * app.get('/teapot', (c) => problemResponse(c, problem('unprocessable', { detail: 'No tea.' })));
 * ```
 */
export function problemResponse(c: Context, error: ProblemError): Response {
  return error.toResponse(problemContext(c));
}

export interface RequestIdOptions {
  /** Header that carries the id. @defaultValue `'Request-Id'` */
  header?: string;
  /** Id generator. @defaultValue {@link newRequestId} */
  generate?: () => string;
}

/**
 * Gives every request an id, available as `c.get('requestId')`, and sets the `Request-Id`
 * header on every response, success or failure (CONTRACT section 1). Incoming ids are not
 * trusted: a client could otherwise forge entries in the server's logs. Register it first.
 *
 * @example
 * ```ts
 * const app = new Hono();
 * app.use(requestId());
 * app.onError(onProblem());
 * app.notFound(notFoundProblem(app));
 * ```
 */
export function requestId(options: RequestIdOptions = {}): MiddlewareHandler {
  const header = options.header ?? 'Request-Id';
  const generate = options.generate ?? newRequestId;
  return async (c, next) => {
    const id = generate();
    c.set('requestId', id);
    // Set before the handler runs, Hono passes it into every response it builds (HEAD included)
    // without rebuilding one afterwards, which would cost a copy of the body per request.
    c.header(header, id);
    try {
      await next();
    } catch (thrown) {
      // Hono hands only Error instances to onError and re-throws anything else; answer those
      // here, as a 500 problem that reveals nothing, instead of the server's bare text.
      c.res = fromUnknown(thrown).toResponse({ instance: c.req.path, requestId: id });
    }
    // A handler that returned its own Response skipped the prepared headers.
    if (!c.res.headers.has(header)) c.res.headers.set(header, id);
  };
}

const HTTP_EXCEPTION_CODES: Readonly<Record<number, HoldfastProblemCode>> = {
  400: 'validation_failed',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'invalid_state_transition',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'unprocessable',
};

/**
 * Maps a thrown value to a problem: `ProblemError` as is, Hono's `HTTPException` by status
 * (its message is not trusted to be safe, so the catalogue's wording is used), anything else
 * as 500 `internal_error` that reveals nothing.
 *
 * @example
 * ```ts
 * const p = toProblem(new HTTPException(413)); // payload_too_large
 * ```
 */
export function toProblem(error: unknown): ProblemError {
  if (error instanceof HTTPException) {
    if (error.status === 429) return problem('rate_limited', { retryAfter: 1, cause: error });
    if (error.status === 503) return problem('service_unavailable', { retryAfter: 1, cause: error });
    const code = HTTP_EXCEPTION_CODES[error.status];
    if (code) return problem(code, { cause: error });
  }
  return fromUnknown(error);
}

export interface OnProblemOptions {
  /**
   * Called with the original error of every 5xx, for the server's own logs (never the
   * response). @defaultValue logs to `console.error` with the request id
   */
  log?: (error: unknown, c: Context) => void;
}

/**
 * The error handler: every error leaves as `application/problem+json` with `Request-Id`,
 * and a 500 carries no message, stack, SQL, host name or version (SPEC section 7 rule 2).
 *
 * @example
 * ```ts
 * app.onError(onProblem({ log: (error, c) => logger.error({ err: error, requestId: c.get('requestId') }) }));
 * ```
 */
export function onProblem(options: OnProblemOptions = {}): ErrorHandler {
  const log =
    options.log ??
    ((error: unknown, c: Context) => {
      console.error(`[${c.get('requestId') ?? '-'}] ${c.req.method} ${c.req.path} failed:`, error);
    });
  return (error, c) => {
    const converted = toProblem(error);
    if (converted.status >= 500) log(error, c);
    return problemResponse(c, converted);
  };
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** The part of a Hono app `notFoundProblem` reads: its router. */
export interface RoutedApp {
  readonly router: Router<[unknown, RouterRoute]>;
}

/**
 * The methods with a route (not only middleware) at `path`, `HEAD` included where `GET` is.
 *
 * @example
 * ```ts
 * allowedMethods(app, '/v1/orders'); // ['GET', 'HEAD', 'POST']
 * ```
 */
export function allowedMethods(app: RoutedApp, path: string): string[] {
  const allowed: string[] = [];
  for (const method of METHODS) {
    const [matches] = app.router.match(method, path);
    if (matches.some(([[, route]]: [[unknown, RouterRoute], unknown]) => route.method === method))
      allowed.push(method);
  }
  if (allowed.includes('GET')) allowed.splice(allowed.indexOf('GET') + 1, 0, 'HEAD');
  return allowed;
}

/**
 * The not-found handler: 405 `method_not_allowed` with `Allow` when the path exists under
 * other methods (RFC 9110 section 15.5.6), else 404 `not_found`; both as problem+json.
 *
 * @example
 * ```ts
 * app.notFound(notFoundProblem(app));
 * ```
 */
export function notFoundProblem(app?: RoutedApp): NotFoundHandler {
  return (c) => {
    const allowed = app ? allowedMethods(app, c.req.path) : [];
    if (allowed.length > 0) {
      return problemResponse(
        c,
        problem('method_not_allowed', {
          detail: `${c.req.method} is not allowed on ${c.req.path}; allowed: ${allowed.join(', ')}.`,
          headers: { Allow: allowed.join(', ') },
        }),
      );
    }
    return problemResponse(c, problem('not_found', { detail: `Nothing is found at ${c.req.path}.` }));
  };
}

export interface JsonBodyOptions {
  /** Largest accepted body in bytes; larger ones get 413. @defaultValue 1 MiB (CONTRACT section 1) */
  maxBytes?: number;
  /**
   * Deepest accepted nesting of arrays and objects (the top-level value is depth 1); deeper
   * bodies get 400 `validation_failed`, before anything walks them recursively (a deep enough
   * body would otherwise overflow the stack of `JSON.stringify`, zod or a fingerprint: a 500).
   * @defaultValue 64
   */
  maxDepth?: number;
  /**
   * The text rule (CONTRACT section 10): U+0000 in any key or string and a `__proto__` key are
   * 400 `validation_failed` naming the field; lone surrogates become U+FFFD. `'as-is'` skips it.
   * @defaultValue `'well-formed'`
   */
  text?: 'well-formed' | 'as-is';
}

const BODYLESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

/** `application/json` or any `+json` type, with no charset or UTF-8 (RFC 8259 section 8.1). */
function isJsonMediaType(value: string | undefined): boolean {
  if (!value) return false;
  if (value === 'application/json') return true;
  const [essence = '', ...params] = value.split(';').map((part) => part.trim().toLowerCase());
  if (essence !== 'application/json' && !/^application\/[a-z0-9.!#$&^_-]+\+json$/.test(essence)) return false;
  return params.every((param) => !param.startsWith('charset=') || /^charset="?utf-8"?$/.test(param));
}

/** The parts of Node's `IncomingMessage` that `readIncoming` uses (no Node types needed). */
interface NodeIncoming {
  on(event: string, listener: (...args: never[]) => void): unknown;
  off(event: string, listener: (...args: never[]) => void): unknown;
  pause(): unknown;
  readonly readableFlowing?: boolean | null;
  readonly readableDidRead?: boolean;
  readonly complete?: boolean;
  rawBody?: unknown;
}

interface NodeBuffer {
  concat(list: readonly Uint8Array[], total: number): Uint8Array;
}

/** Node's `Buffer`, where there is one: the Node fast path of `jsonBody()` needs it. */
const nodeBuffer = (globalThis as { Buffer?: NodeBuffer }).Buffer;

/**
 * The Node request behind `c.req.raw` under `@hono/node-server` (`c.env.incoming`), when
 * nothing has started reading it: its bytes can then be read straight from the socket stream,
 * without the WHATWG Request and ReadableStream that `c.req.raw.body` would build first.
 */
function unreadIncoming(env: unknown): NodeIncoming | undefined {
  const incoming = (env as { incoming?: unknown } | undefined)?.incoming as NodeIncoming | undefined;
  if (!incoming || !nodeBuffer || typeof incoming.on !== 'function' || typeof incoming.pause !== 'function') {
    return undefined;
  }
  if (incoming.readableFlowing !== null || incoming.readableDidRead !== false || 'rawBody' in incoming) {
    return undefined;
  }
  return incoming;
}

/**
 * Reads a Node request body up to `maxBytes` (null beyond it: reading stops and the rest is
 * left unread) and leaves the bytes as `rawBody`, which `@hono/node-server` serves to anyone
 * who asks `c.req.raw` for the body afterwards.
 */
function readIncoming(
  incoming: NodeIncoming,
  maxBytes: number,
  buffer: NodeBuffer,
): Promise<Uint8Array | null> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let total = 0;
    const done = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    const onData = (chunk: Uint8Array) => {
      total += chunk.byteLength;
      if (total > maxBytes) {
        done();
        incoming.pause();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      const bytes = chunks.length === 1 ? (chunks[0] as Uint8Array) : buffer.concat(chunks, total);
      incoming.rawBody = bytes;
      resolve(bytes);
    };
    const onError = (error: unknown) => {
      done();
      reject(error);
    };
    // The client went away before the end of its body: nothing to answer.
    const onClose = () => {
      if (incoming.complete) return;
      done();
      reject(new Error('the request body ended early: the client closed the connection'));
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}

async function readLimited(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array | null> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** 400 `validation_failed` for a body breaking the text rule, naming the field. */
export function textProblem(issue: TextIssue): ProblemError {
  const nul = issue.reason === 'nul';
  return problem('validation_failed', {
    detail: nul
      ? 'The request body contains a NUL character (U+0000), which is never valid here.'
      : `The request body has a "__proto__" key at ${issue.field}, which is never accepted.`,
    errors: [
      {
        field: issue.field,
        pointer: issue.pointer,
        code: nul ? 'invalid_characters' : 'forbidden_key',
        detail: nul ? 'Must not contain U+0000.' : 'A key named "__proto__" is not accepted.',
      },
    ],
  });
}

/**
 * Reads and parses a JSON request body once, before any handler: 413 `payload_too_large` over
 * `maxBytes` (without buffering more than that), 415 `unsupported_media_type` for a body that
 * is not `application/json`, 400 `invalid_json` for bytes that are not UTF-8 JSON. The value is
 * at `c.get('jsonBody')` (`undefined` for an empty body) and `c.req.json()` still works, so
 * validators downstream read the same value.
 *
 * @example
 * ```ts
 * app.use('/v1/*', jsonBody({ maxBytes: 1024 * 1024 }));
 * app.post('/v1/orders', (c) => c.json(c.get('jsonBody')));
 * ```
 */
export function jsonBody(options: JsonBodyOptions = {}): MiddlewareHandler {
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  if (!Number.isInteger(maxBytes) || maxBytes < 1)
    throw new RangeError('maxBytes must be a positive integer');
  const maxDepth = options.maxDepth ?? 64;
  if (!Number.isInteger(maxDepth) || maxDepth < 1)
    throw new RangeError('maxDepth must be a positive integer');
  const tooLarge = () =>
    problem('payload_too_large', { detail: `The request body is larger than ${maxBytes} bytes.` });
  return async (c, next) => {
    c.set('jsonBody', undefined);
    if (BODYLESS.has(c.req.method)) return next();
    const raw = c.req.raw;
    const incoming = unreadIncoming(c.env);
    if (!incoming && raw.body === null) return next();
    const declared = raw.headers.get('content-length');
    if (declared !== null && Number(declared) > maxBytes) throw tooLarge();
    const bytes =
      incoming && nodeBuffer
        ? await readIncoming(incoming, maxBytes, nodeBuffer)
        : await readLimited(raw.body as ReadableStream<Uint8Array>, maxBytes);
    if (bytes === null) throw tooLarge();
    if (bytes.byteLength === 0) {
      // The stream is spent: cache the empty body so later readers (validators) see it, not an error.
      Object.assign(c.req.bodyCache, { arrayBuffer: Promise.resolve(new ArrayBuffer(0)) });
      return next();
    }
    const contentType = raw.headers.get('content-type') ?? undefined;
    if (!isJsonMediaType(contentType)) {
      throw problem('unsupported_media_type', {
        detail: 'Request bodies must be sent as application/json.',
        headers: { 'Accept-Post': 'application/json', 'Accept-Patch': 'application/json' },
      });
    }
    let value: unknown;
    let source: string;
    try {
      source = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
      value = JSON.parse(source);
    } catch {
      throw problem('invalid_json', { detail: 'The request body is not valid UTF-8 JSON.' });
    }
    if (nestedDeeperThan(value, maxDepth)) {
      throw problem('validation_failed', {
        detail: `The request body nests arrays and objects deeper than ${maxDepth} levels.`,
      });
    }
    let text: string | undefined;
    if (options.text !== 'as-is') {
      const checked = wellFormedJson(value, source);
      if (!checked.ok) throw textProblem(checked.issue);
      // Hono derives c.req.json() from a cached text: give it the well-formed one.
      if (checked.value !== value) text = JSON.stringify(checked.value);
      value = checked.value;
    }
    const buffer = new ArrayBuffer(bytes.byteLength);
    new Uint8Array(buffer).set(bytes);
    // Hono caches body promises (its BodyCache type names the resolved values) and derives
    // text()/json() from the first cached entry, so the exact bytes go first.
    Object.assign(c.req.bodyCache, {
      arrayBuffer: Promise.resolve(buffer),
      json: Promise.resolve(value),
      ...(text === undefined ? {} : { text: Promise.resolve(text) }),
    });
    c.set('jsonBody', value);
    return next();
  };
}
