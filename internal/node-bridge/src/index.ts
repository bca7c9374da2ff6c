import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The Node side of every `/express` and `/fastify` door: a Node request seen as a Fetch
 * `Request` (what the cores take) and a Fetch `Response` written to a Node response (what the
 * cores give). Modelled on tRPC's `adapters/node-http/incomingMessageToRequest.ts`.
 */

/** A Node request, as Express and Fastify hand it over (either may have read the body already). */
export type NodeRequest = IncomingMessage & {
  /** Express's `req.originalUrl`: the URL before a mounted router cut its prefix. */
  readonly originalUrl?: string;
  /** A body some middleware or parser already read: bytes, text, or a parsed value. */
  readonly body?: unknown;
};

const BODYLESS = new Set(['GET', 'HEAD']);

/** The request's URL; a missing or malformed `Host` falls back to `localhost`, never an error. */
export function requestUrl(req: NodeRequest): URL {
  const path = req.originalUrl ?? req.url ?? '/';
  const encrypted = (req.socket as { encrypted?: boolean } | undefined)?.encrypted === true;
  const host = req.headers.host ?? 'localhost';
  try {
    return new URL(path, `${encrypted ? 'https' : 'http'}://${host}`);
  } catch {
    return new URL(path.startsWith('/') ? path : `/${path}`, 'http://localhost');
  }
}

/** Node's headers as Fetch `Headers`; repeated headers keep every value. */
export function requestHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    const value = raw[i + 1] as string;
    // HTTP/2 pseudo-headers have no place in a Fetch Request.
    if (name.startsWith(':')) continue;
    try {
      headers.append(name, value);
    } catch {
      // A header value Fetch refuses (a control character) is dropped, not a 500.
    }
  }
  return headers;
}

/**
 * The body as a stream read lazily: nothing flows until the core reads it, and a core that
 * stops early (a size cap) cancels without buffering the rest.
 */
function streamOf(req: IncomingMessage): ReadableStream<Uint8Array> {
  let attached = false;
  const detach: (() => void)[] = [];
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (!attached) {
        attached = true;
        const onData = (chunk: Buffer | string) => {
          controller.enqueue(
            typeof chunk === 'string' ? new TextEncoder().encode(chunk) : new Uint8Array(chunk),
          );
          if ((controller.desiredSize ?? 1) <= 0) req.pause();
        };
        const onEnd = () => {
          for (const off of detach) off();
          controller.close();
        };
        const onError = (error: Error) => {
          for (const off of detach) off();
          controller.error(error);
        };
        // The client went away before the end of its body.
        const onClose = () => {
          if (req.complete) return;
          for (const off of detach) off();
          controller.error(new Error('the request body ended early: the client closed the connection'));
        };
        req.on('data', onData);
        req.on('end', onEnd);
        req.on('error', onError);
        req.on('close', onClose);
        detach.push(
          () => req.off('data', onData),
          () => req.off('end', onEnd),
          () => req.off('error', onError),
          () => req.off('close', onClose),
        );
      }
      req.resume();
    },
    cancel() {
      for (const off of detach) off();
      req.pause();
    },
  });
}

/** A body some Node middleware already read, as bytes: JSON-serialised when it was parsed. */
function readBody(body: unknown): BodyInit | undefined {
  if (body === undefined) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return new Uint8Array(body);
  // A parsed value: its JSON is the best that can be recovered (not the original bytes).
  return JSON.stringify(body);
}

export interface ToRequestOptions {
  /** Aborts the request's `signal`; the door passes the response, so a client gone aborts it. */
  readonly res?: ServerResponse;
  /** Ignore `req.body`, read the stream (the door made sure no one read it). */
  readonly ignoreParsedBody?: boolean;
  /** The body a framework read (Fastify's `request.body`), in place of `req.body`. */
  readonly body?: unknown;
}

/**
 * A Fetch `Request` for a Node request: method, URL (Express's `originalUrl`), headers, the
 * body as a lazy stream (or the bytes a parser already read into `req.body`), and a `signal`
 * that aborts when the client closes the connection before the response was sent.
 *
 * @example
 * ```ts
 * createServer(async (req, res) => writeResponse(res, await handle(toRequest(req, { res }))));
 * ```
 */
export function toRequest(req: NodeRequest, options: ToRequestOptions = {}): Request {
  const method = (req.method ?? 'GET').toUpperCase();
  const controller = new AbortController();
  const res = options.res;
  if (res) {
    const onClose = () => {
      if (!res.writableFinished) controller.abort();
    };
    res.once('close', onClose);
  }
  let body: BodyInit | null = null;
  if (!BODYLESS.has(method)) {
    const read = options.ignoreParsedBody ? undefined : readBody('body' in options ? options.body : req.body);
    body = read ?? (req.readableEnded ? null : streamOf(req));
  }
  const init: RequestInit & { duplex?: 'half' } = {
    method,
    headers: requestHeaders(req),
    signal: controller.signal,
    ...(body === null ? {} : { body, duplex: 'half' }),
  };
  return new Request(requestUrl(req), init);
}

/** Response headers as Node wants them: `Set-Cookie` as a list, each cookie on its own line. */
function setHeaders(res: ServerResponse, headers: Headers): void {
  for (const [name, value] of headers) {
    if (name === 'set-cookie') continue;
    res.setHeader(name, value);
  }
  const cookies = headers.getSetCookie();
  if (cookies.length > 0) {
    const before = res.getHeader('set-cookie');
    const earlier = before === undefined ? [] : Array.isArray(before) ? before : [String(before)];
    res.setHeader('set-cookie', [...earlier, ...cookies]);
  }
}

/**
 * Writes a Fetch `Response` to a Node response: status, headers (every `Set-Cookie`), and the
 * body streamed chunk by chunk with backpressure. Headers set on `res` before (a request id,
 * rate-limit headers) stay unless the response has its own. A client that went away cancels
 * the body.
 *
 * @example
 * ```ts
 * await writeResponse(res, new Response('hi', { status: 200 }));
 * ```
 */
export async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  if (response.statusText) res.statusMessage = response.statusText;
  setHeaders(res, response.headers);
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  try {
    for (;;) {
      if (res.destroyed) {
        await reader.cancel();
        return;
      }
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off('drain', go);
            res.off('close', go);
            resolve();
          };
          res.on('drain', go);
          res.on('close', go);
        });
      }
    }
  } catch (error) {
    // The body failed half-way: the status is out, so the only honest answer is a cut connection.
    res.destroy(error instanceof Error ? error : new Error(String(error)));
    return;
  }
  res.end();
}

/**
 * A Node request listener serving a Fetch handler: a bare `http.createServer` for a core, the
 * same thing `@hono/node-server` does for Hono. A handler that throws answers 500 with no body.
 *
 * @example
 * ```ts
 * createServer(nodeListener((request) => new Response('ok'))).listen(0);
 * ```
 */
export function nodeListener(
  handler: (request: Request) => Response | Promise<Response>,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void (async () => {
      let response: Response;
      try {
        response = await handler(toRequest(req, { res }));
      } catch {
        response = new Response(null, { status: 500 });
      }
      await writeResponse(res, response);
    })();
  };
}

/**
 * A Fetch `Response` captured from a Node response that an Express handler (or an error
 * handler) wrote: nothing reaches the client until `release` sends it, so the idempotency door
 * can store the answer before the client sees it, as the Hono door does.
 */
export interface CapturedResponse {
  /** Resolves once the handler ended its response. */
  readonly response: Promise<Response>;
  /** Sends `response` (the captured one, or another) to the client for real. */
  release(response: Response): Promise<void>;
  /** Stops capturing without sending: what is written next goes to the client. */
  restore(): void;
}

/**
 * Intercepts `res.writeHead`, `res.write` and `res.end` until the handler ends its response.
 *
 * @example
 * ```ts
 * const captured = captureResponse(res);
 * next();
 * await captured.release(await captured.response);
 * ```
 */
export function captureResponse(res: ServerResponse): CapturedResponse {
  const original = { writeHead: res.writeHead, write: res.write, end: res.end };
  const chunks: Uint8Array[] = [];
  let resolve: (response: Response) => void = () => {};
  const response = new Promise<Response>((r) => {
    resolve = r;
  });
  const push = (chunk: unknown, encoding?: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    if (typeof chunk === 'string') {
      chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
    } else if (chunk instanceof Uint8Array) {
      chunks.push(chunk);
    }
  };
  const patched = res as unknown as Record<'writeHead' | 'write' | 'end', unknown>;
  patched.writeHead = (status: number, ...rest: unknown[]) => {
    res.statusCode = status;
    const headers = rest.find((part) => typeof part === 'object' && part !== null);
    if (Array.isArray(headers)) {
      for (let i = 0; i + 1 < headers.length; i += 2) res.setHeader(String(headers[i]), headers[i + 1]);
    } else if (headers) {
      for (const [name, value] of Object.entries(headers)) {
        if (value !== undefined) res.setHeader(name, value as string | string[]);
      }
    }
    return res;
  };
  patched.write = (chunk: unknown, encoding?: unknown, callback?: unknown) => {
    push(chunk, encoding);
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') queueMicrotask(() => (done as () => void)());
    return true;
  };
  patched.end = (chunk?: unknown, encoding?: unknown) => {
    push(chunk, encoding);
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.getHeaders())) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const one of value) headers.append(name, one);
      else headers.set(name, String(value));
    }
    const status = res.statusCode;
    const nullBody = status === 204 || status === 205 || status === 304;
    headers.delete('content-length');
    resolve(new Response(nullBody ? null : Buffer.concat(chunks), { status, headers }));
    return res;
  };
  return {
    response,
    async release(answer) {
      Object.assign(res, original);
      await writeResponse(res, answer);
    },
    restore() {
      Object.assign(res, original);
    },
  };
}
