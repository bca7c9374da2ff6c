/**
 * Adaptive per-endpoint concurrency: additive increase, multiplicative decrease (AIMD, the rule
 * TCP congestion control uses: https://www.rfc-editor.org/rfc/rfc5681#section-3.1). Each
 * endpoint's limit moves between 1 and the ceiling: +1 for every `limit` attempts that succeed
 * fast, halved on a sign the receiver is overloaded. The arithmetic runs in the outcome
 * statement, on the shared pacing row, so every worker steers the same limit.
 */

/** Statuses that say "slow down": 429 Too Many Requests and the gateway/overload 5xx. */
const OVERLOAD_STATUSES = new Set([429, 502, 503, 504]);

/**
 * Whether an attempt is a sign of overload that halves the endpoint's limit: a timeout or a
 * connection error (`status` undefined while the destination was allowed), 429, 502, 503, 504.
 *
 * @example
 * ```ts
 * isCongestion(503, false); // true
 * isCongestion(500, false); // false: the receiver answered, it is failing, not overloaded
 * ```
 */
export function isCongestion(status: number | undefined, forbidden: boolean): boolean {
  if (status === undefined) return !forbidden;
  return OVERLOAD_STATUSES.has(status);
}

/** A success at most this slow (and under a quarter of the timeout) earns the additive increase. */
export const FAST_MS = 1_000;

/** The longest pause a `Retry-After` imposes on a whole endpoint (its own delivery waits the full value). */
export const MAX_PAUSE_MS: number = 10 * 60_000;
