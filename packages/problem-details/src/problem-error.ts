import { clipEcho, clipPointer, formatCount, MAX_ENTRY_DETAIL_LENGTH, MAX_ERRORS } from './bounds';

/** A per-field entry of `errors[]`. */
export interface FieldError {
  /** Dotted path of the field at fault (`card.expMonth`, `sort`, `limit`). */
  readonly field: string;
  /** Stable machine-readable code of this entry. */
  readonly code: string;
  /** RFC 6901 JSON Pointer into the request body, in URI-fragment form as RFC 9457's example writes it (`#/card/expMonth`). */
  readonly pointer?: string;
  /** Human-readable explanation; never branch on it. */
  readonly detail?: string;
}

/** Seconds (a non-negative integer) or a date, rendered as the `Retry-After` header. */
export type RetryAfter = number | Date;

/** What a caller may add when building a problem. */
export interface ProblemInit {
  /** Explanation of this occurrence. Defaults to the title. */
  detail?: string;
  /**
   * Field-level entries. At most 20 are kept (`MAX_ERRORS`): when more are given, the rest are
   * dropped and `detail` says how many; `field` and `pointer` are cut to 100 characters.
   */
  errors?: readonly FieldError[];
  /** Required for 429 and 503; rendered as `Retry-After`. */
  retryAfter?: RetryAfter;
  /** Extra response headers (`Allow`, `WWW-Authenticate`, `RateLimit`). */
  headers?: Readonly<Record<string, string>>;
  /** Extension members of the body; they never override the standard members. */
  extensions?: Readonly<Record<string, unknown>>;
  /** The underlying error, kept for logs and never rendered. */
  cause?: unknown;
}

/** Where a problem occurred: rendered as `instance` and `requestId`. */
export interface ProblemContext {
  /** The request path (`instance`). */
  instance?: string;
  /** The request id, also sent as the `Request-Id` header. */
  requestId?: string;
  /**
   * The service's own base for problem `type` URIs (`https://api.example.com/problems/`).
   * Every problem built with the default base (relative `/problems/<code>`: the codes of every
   * Holdfast package) is rendered under it; a type built with another base is left as it is.
   * In Hono, `problemTypeBase(base)` of `/hono` sets it for every response of an app.
   */
  typeBase?: string;
}

/**
 * The base of every problem `type` unless a catalogue names its own: `/problems/`, a relative
 * reference (RFC 9457 section 3.1.1) that resolves against the API's own URL. A service makes
 * the types absolute under its own domain with `typeBase` when rendering (see
 * {@link ProblemContext}), never under ours.
 */
export const DEFAULT_TYPE_BASE = '/problems/';

/**
 * `type` rendered under `typeBase`: a type under {@link DEFAULT_TYPE_BASE} moves under
 * `typeBase`; any other type, or no `typeBase`, leaves it as it is.
 *
 * @example
 * ```ts
 * problemType('/problems/not_found', 'https://api.example.com/problems/'); // 'https://api.example.com/problems/not_found'
 * ```
 */
export function problemType(type: string, typeBase: string | undefined): string {
  if (typeBase === undefined || !type.startsWith(DEFAULT_TYPE_BASE)) return type;
  return typeBase + type.slice(DEFAULT_TYPE_BASE.length);
}

/** The RFC 9457 document Holdfast renders. */
export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  requestId?: string;
  code: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

/** The media type of every error body (RFC 9457 section 3). */
export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

const STANDARD_MEMBERS = new Set([
  'type',
  'title',
  'status',
  'detail',
  'instance',
  'requestId',
  'code',
  'errors',
]);

interface ProblemErrorInit extends ProblemInit {
  code: string;
  status: number;
  title: string;
  type: string;
}

/**
 * An error that knows its stable `code`, HTTP `status` and how to render itself as
 * `application/problem+json`. Build one with `problem()` or a catalogue's `create()`.
 *
 * @example
 * ```ts
 * try {
 *   throw problem('not_found', { detail: 'No order ord_123.' });
 * } catch (error) {
 *   if (isProblemError(error)) return error.toResponse({ instance: '/v1/orders/ord_123', requestId });
 * }
 * ```
 */
export class ProblemError<C extends string = string> extends Error {
  override readonly name: string = 'ProblemError';
  readonly code: C;
  readonly status: number;
  readonly title: string;
  readonly type: string;
  readonly detail: string;
  readonly errors: readonly FieldError[];
  readonly retryAfter: RetryAfter | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly extensions: Readonly<Record<string, unknown>>;

  constructor(init: ProblemErrorInit & { code: C }) {
    super(init.detail ?? init.title, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.status = init.status;
    this.title = init.title;
    this.type = init.type;
    const errors = init.errors ?? [];
    const omitted = errors.length - MAX_ERRORS;
    const detail = init.detail ?? `${init.title}.`;
    this.detail = omitted > 0 ? `${detail} … and ${formatCount(omitted)} more errors, not listed.` : detail;
    this.errors = (omitted > 0 ? errors.slice(0, MAX_ERRORS) : errors).map(boundedEntry);
    this.retryAfter = init.retryAfter;
    this.headers = init.headers ?? {};
    this.extensions = init.extensions ?? {};
    if (typeof this.retryAfter === 'number' && (!Number.isFinite(this.retryAfter) || this.retryAfter < 0)) {
      throw new RangeError('retryAfter must be a non-negative number of seconds');
    }
  }

  /** The RFC 9457 document, with `instance` and `requestId` from the context. */
  toJSON(context: ProblemContext = {}): ProblemDocument {
    const extensions: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(this.extensions)) {
      if (!STANDARD_MEMBERS.has(key)) extensions[key] = value;
    }
    return {
      ...extensions,
      type: problemType(this.type, context.typeBase),
      title: this.title,
      status: this.status,
      detail: this.detail,
      ...(context.instance === undefined ? {} : { instance: context.instance }),
      ...(context.requestId === undefined ? {} : { requestId: context.requestId }),
      code: this.code,
      ...(this.errors.length > 0 ? { errors: this.errors.map((entry) => ({ ...entry })) } : {}),
    };
  }

  /** The response headers: content type, `Retry-After`, `Request-Id` and the problem's own. */
  responseHeaders(context: ProblemContext = {}): Headers {
    const headers = new Headers(this.headers);
    headers.set('Content-Type', PROBLEM_MEDIA_TYPE);
    if (this.retryAfter !== undefined) headers.set('Retry-After', formatRetryAfter(this.retryAfter));
    if (context.requestId !== undefined) headers.set('Request-Id', context.requestId);
    return headers;
  }

  /** A standard `Response` carrying the problem as `application/problem+json`. */
  toResponse(context: ProblemContext = {}): Response {
    return new Response(JSON.stringify(this.toJSON(context)), {
      status: this.status,
      headers: this.responseHeaders(context),
    });
  }
}

/** The entry with what it echoes cut to size (the same object when nothing needs cutting). */
function boundedEntry(entry: FieldError): FieldError {
  const field = clipEcho(entry.field);
  const pointer = entry.pointer === undefined ? undefined : clipPointer(entry.pointer);
  const detail = entry.detail === undefined ? undefined : clipEcho(entry.detail, MAX_ENTRY_DETAIL_LENGTH);
  if (field === entry.field && pointer === entry.pointer && detail === entry.detail) return entry;
  return {
    ...entry,
    field,
    ...(pointer === undefined ? {} : { pointer }),
    ...(detail === undefined ? {} : { detail }),
  };
}

/** Renders `Retry-After` as delay-seconds or an HTTP-date (RFC 9110 section 10.2.3). */
export function formatRetryAfter(value: RetryAfter): string {
  if (value instanceof Date) return value.toUTCString();
  return String(Math.ceil(value));
}

/**
 * Whether `value` is a `ProblemError` (also across duplicated copies of this package).
 *
 * @example
 * ```ts
 * if (isProblemError(error) && error.code === 'invalid_cursor') restartFromFirstPage();
 * ```
 */
export function isProblemError(value: unknown): value is ProblemError {
  if (value instanceof ProblemError) return true;
  return (
    value instanceof Error &&
    value.name === 'ProblemError' &&
    'code' in value &&
    typeof value.code === 'string' &&
    'status' in value &&
    typeof value.status === 'number' &&
    'toResponse' in value &&
    typeof value.toResponse === 'function'
  );
}
