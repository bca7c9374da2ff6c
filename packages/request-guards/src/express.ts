import { toRequest } from '@holdfast/node-bridge';
import type { Request, RequestHandler } from 'express';
import { type JsonBodyOptions, jsonBodyReader } from './json-body';
import { noFieldsProblem } from './no-fields';
import { nulProblem } from './nul';
import { type RequestIdOptions, requestIdSettings } from './request-id';

declare global {
  namespace Express {
    interface Request {
      /**
       * The request's id, rendered in problem bodies when a request-id middleware set it
       * (`requestId()` from `@holdfast/request-guards/express` does).
       */
      requestId?: string;
    }
  }
}

/**
 * Gives every request a fresh id, `req.requestId` (which `onProblem()` of
 * `@holdfast/problem-details/express` renders), and sets the `Request-Id` header (or `header`)
 * on every response, success or failure. Incoming ids are not trusted: a client could otherwise
 * forge entries in the server's logs. Register it first.
 *
 * @example
 * ```ts
 * app.use(requestId());
 * ```
 */
export function requestId(options: RequestIdOptions = {}): RequestHandler {
  const { header, generate } = requestIdSettings(options);
  return (req, res, next) => {
    const id = generate();
    req.requestId = id;
    res.setHeader(header, id);
    next();
  };
}

/** Requests whose body a `jsonBody()` already read (it may be mounted on the app and a router). */
const guarded = new WeakSet<object>();

/**
 * Reads and parses a JSON request body once, before any handler, by the same guards as the Hono
 * door (`jsonBodyReader`): 413 `payload_too_large`, 415 `unsupported_media_type`, 400
 * `invalid_json`, 400 `validation_failed` for the shape, the depth and the text rule. The value
 * is `req.body` (`undefined` for an empty body). Use it in place of `express.json()`: a body
 * another parser already read is an error (a 500, so the misconfiguration shows at once), never
 * passed on unguarded.
 *
 * @example
 * ```ts
 * app.use(jsonBody({ maxBytes: 1024 * 1024 }));
 * app.post('/v1/orders', (req, res) => { res.status(201).json(req.body); });
 * ```
 */
export function jsonBody(options: JsonBodyOptions = {}): RequestHandler {
  const read = jsonBodyReader(options);
  return (req, res, next) => {
    if (guarded.has(req)) return next();
    // Another parser read the stream: its value never went through the guards, and a silent
    // pass would leave a service believing its limits hold.
    if (req.body !== undefined) {
      return next(
        new Error(
          'jsonBody() reads the body itself: register it in place of express.json() or any other body parser',
        ),
      );
    }
    guarded.add(req);
    read(toRequest(req, { res, ignoreParsedBody: true })).then((value) => {
      req.body = value;
      next();
    }, next);
  };
}

/**
 * Refuses U+0000 in the path (404 `not_found`) and in query parameter names and values (400
 * `validation_failed`, `invalid_characters`), by `nulProblem`.
 *
 * @example
 * ```ts
 * app.use(refuseNul());
 * ```
 */
export function refuseNul(): RequestHandler {
  return (req, _res, next) => {
    next(nulProblem(req.originalUrl));
  };
}

/**
 * Refuses a body with fields for an action that takes none (see `noFieldsProblem`): call it
 * first in the handler, after `jsonBody()` read the body.
 *
 * @example
 * ```ts
 * app.post('/orders/:id/cancel', (req, res) => { refuseFields(req); res.json(cancel(req.params.id)); });
 * ```
 */
export function refuseFields(req: Request): void {
  const refused = noFieldsProblem(req.body);
  if (refused) throw refused;
}
