/** Settings shared by every entry point. */
export interface IdempotencyOptions {
  /**
   * The schema `migrations({ schema })` put the table in. Absent: the unqualified name, found
   * through the connection's `search_path`.
   */
  schema?: string;
  /**
   * How long a stored response is replayed. Never less than 24 hours (as Stripe
   * keeps keys), so a client retrying within a day always gets the replay;
   * smaller values are refused with a RangeError. @defaultValue 24 h
   */
  retentionMs?: number;
  /** `Retry-After` (seconds) of a 409 `idempotency_key_in_use`. @defaultValue 1 */
  retryAfterSeconds?: number;
  /**
   * Response headers stored and replayed (case-insensitive). `Set-Cookie` and `Request-Id` are
   * refused: a replay must never hand out a session, and carries its own request id.
   * @defaultValue {@link DEFAULT_STORED_HEADERS}
   */
  storedHeaders?: readonly string[];
  /** The clock, in milliseconds since the epoch. @defaultValue `Date.now` */
  now?: () => number;
}

/** {@link IdempotencyOptions} with every default applied and checked. */
export interface ResolvedIdempotencyOptions {
  readonly schema: string | undefined;
  readonly retentionMs: number;
  readonly retryAfterSeconds: number;
  readonly storedHeaders: ReadonlySet<string>;
  readonly now: () => number;
}

/**
 * 24 hours: the shortest retention allowed, so a client retrying for a day gets the replay.
 *
 * @example
 * ```ts
 * idempotent(transaction, request, handler, { retentionMs: 7 * MIN_RETENTION_MS }); // keep answers a week
 * ```
 */
export const MIN_RETENTION_MS: number = 24 * 60 * 60 * 1000;

/**
 * Headers a replay carries by default: those that describe the stored representation.
 *
 * @example
 * ```ts
 * withIdempotency(c, { transaction, account, storedHeaders: [...DEFAULT_STORED_HEADERS, 'Preference-Applied'] }, handler);
 * ```
 */
export const DEFAULT_STORED_HEADERS: readonly string[] = [
  'Location',
  'Content-Type',
  'Content-Language',
  'Content-Location',
  'ETag',
  'Last-Modified',
  'Link',
];

const NEVER_STORED = new Set(['set-cookie', 'set-cookie2', 'request-id', 'idempotent-replayed']);

/**
 * Applies defaults and refuses unsafe settings: a retention under 24 h, `Set-Cookie` or
 * `Request-Id` among the stored headers, a schema that is no SQL identifier.
 */
export function resolveIdempotencyOptions(options: IdempotencyOptions = {}): ResolvedIdempotencyOptions {
  const retentionMs = options.retentionMs ?? MIN_RETENTION_MS;
  if (!Number.isInteger(retentionMs) || retentionMs < MIN_RETENTION_MS) {
    throw new RangeError('retentionMs must be an integer of at least 86 400 000 (24 hours)');
  }
  const retryAfterSeconds = options.retryAfterSeconds ?? 1;
  if (!Number.isInteger(retryAfterSeconds) || retryAfterSeconds < 0) {
    throw new RangeError('retryAfterSeconds must be a non-negative integer');
  }
  const storedHeaders = new Set<string>();
  for (const name of options.storedHeaders ?? DEFAULT_STORED_HEADERS) {
    const lower = name.toLowerCase();
    if (NEVER_STORED.has(lower)) throw new TypeError(`storedHeaders must not include ${name}`);
    storedHeaders.add(lower);
  }
  return {
    schema: options.schema,
    retentionMs,
    retryAfterSeconds,
    storedHeaders,
    now: options.now ?? Date.now,
  };
}
