import type { Context, MiddlewareHandler } from 'hono';
import { type JsonBodyOptions, jsonBodyGuard, readLimited } from './json-body';
import { noFieldsProblem } from './no-fields';

declare module 'hono' {
  interface ContextVariableMap {
    /** Set by `jsonBody()`: the parsed request body, or `undefined` when there was none. */
    jsonBody: unknown;
  }
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
  const guard = jsonBodyGuard(options);
  return async (c, next) => {
    c.set('jsonBody', undefined);
    if (guard.bodyless(c.req.method)) return next();
    const raw = c.req.raw;
    const incoming = unreadIncoming(c.env);
    if (!incoming && raw.body === null) return next();
    const declared = raw.headers.get('content-length');
    if (declared !== null && Number(declared) > guard.maxBytes) throw guard.tooLarge();
    const bytes =
      incoming && nodeBuffer
        ? await readIncoming(incoming, guard.maxBytes, nodeBuffer)
        : await readLimited(raw.body as ReadableStream<Uint8Array>, guard.maxBytes);
    if (bytes === null) throw guard.tooLarge();
    if (bytes.byteLength === 0) {
      // The stream is spent: cache the empty body so later readers (validators) see it, not an error.
      Object.assign(c.req.bodyCache, { arrayBuffer: Promise.resolve(new ArrayBuffer(0)) });
      return next();
    }
    const { value, rewritten } = guard.parse(bytes, raw.headers.get('content-type'));
    const buffer = new ArrayBuffer(bytes.byteLength);
    new Uint8Array(buffer).set(bytes);
    // Hono caches body promises (its BodyCache type names the resolved values) and derives
    // text()/json() from the first cached entry, so the exact bytes go first; c.req.json() and
    // c.req.text() give the well-formed value when the text rule changed it.
    Object.assign(c.req.bodyCache, {
      arrayBuffer: Promise.resolve(buffer),
      json: Promise.resolve(value),
      ...(rewritten === undefined ? {} : { text: Promise.resolve(rewritten) }),
    });
    c.set('jsonBody', value);
    return next();
  };
}

/**
 * Refuses a body with fields for an action that takes none (see `noFieldsProblem`): call it
 * first in the handler of a route declared with `noFieldsBody`, after `jsonBody()` read the body.
 *
 * @example
 * ```ts
 * app.post('/orders/:id/cancel', (c) => { refuseFields(c); return c.json(cancel(c.req.param('id'))); });
 * ```
 */
export function refuseFields(c: Context): void {
  const refused = noFieldsProblem(c.get('jsonBody'));
  if (refused) throw refused;
}

export { refuseNul } from './no-nul';
