/** Settings shared by every entry point. */
export interface IdempotencyOptions {
  /**
   * How long a claimed key stays locked without an answer before another request may take it
   * over: a key held by a process that died is released after this. A
   * live handler renews its lease every third of it, so slow handlers keep their key.
   * @defaultValue 60 000 ms
   */
  leaseMs?: number;
  /**
   * How long a stored response is replayed. Never less than 24 hours (as Stripe
   * keeps keys), so a client retrying within a day always gets the replay;
   * smaller values are refused with a RangeError. @defaultValue 24 h
   */
  retentionMs?: number;
  /** `Retry-After` (seconds) of the 409 sent while the first request runs. @defaultValue 1 */
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
  readonly leaseMs: number;
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
 * idempotent(sql, request, handler, { retentionMs: 7 * MIN_RETENTION_MS }); // keep answers a week
 * ```
 */
export const MIN_RETENTION_MS: number = 24 * 60 * 60 * 1000;

/**
 * The default lease: 60 seconds.
 *
 * @example
 * ```ts
 * idempotent(sql, request, slowHandler, { leaseMs: 5 * DEFAULT_LEASE_MS }); // a handler that may take minutes
 * ```
 */
export const DEFAULT_LEASE_MS: number = 60_000;

/**
 * Headers a replay carries by default: those that describe the stored representation.
 *
 * @example
 * ```ts
 * idempotency({ store, account, storedHeaders: [...DEFAULT_STORED_HEADERS, 'Preference-Applied'] });
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
 * Applies defaults and refuses unsafe settings: a retention under 24 h, a non-positive lease,
 * `Set-Cookie` or `Request-Id` among the stored headers.
 *
 * @example
 * ```ts
 * resolveIdempotencyOptions({ leaseMs: 5_000 }).retentionMs; // 86_400_000
 * resolveIdempotencyOptions({ retentionMs: 60_000 }); // throws RangeError
 * ```
 */
export function resolveIdempotencyOptions(options: IdempotencyOptions = {}): ResolvedIdempotencyOptions {
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  if (!Number.isInteger(leaseMs) || leaseMs < 1) throw new RangeError('leaseMs must be a positive integer');
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
  return { leaseMs, retentionMs, retryAfterSeconds, storedHeaders, now: options.now ?? Date.now };
}
