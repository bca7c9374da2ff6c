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

/**
 * An endpoint's adaptive limit after a batch of outcomes, as the outcome statement steps it on the
 * shared pacing row: halved (not below 1) on overload, else +1 per `limit` fast successes, never
 * above the ceiling. `limit` null is a new endpoint: at the ceiling.
 *
 * @example
 * ```ts
 * nextLimit(8, 8, { congested: true, fast: 0 }); // 4
 * nextLimit(4, 8, { congested: false, fast: 4 }); // 5
 * ```
 */
export function nextLimit(
  limit: number | null,
  ceiling: number,
  batch: { congested: boolean; fast: number },
): number {
  const current = Math.min(limit ?? ceiling, ceiling);
  if (batch.congested) return Math.max(1, current / 2);
  return Math.min(ceiling, current + batch.fast / Math.max(1, current));
}

/**
 * The `maxPerSecond` bucket's tokens at `at` (ms), as the lease statement refills it: a tenth of
 * a second's worth at most (at least one), so a burst after a quiet spell stays small.
 * `tokens` null is a bucket never drawn from: full.
 *
 * @example
 * ```ts
 * bucketTokens(100, 0, 0, 50); // 5 (half of the second's tenth: 100/s for 50 ms)
 * bucketTokens(100, 0, 0, 1_000); // 10 (the bucket's size)
 * ```
 */
export function bucketTokens(
  maxPerSecond: number,
  tokens: number | null,
  tokensAt: number | null,
  at: number,
): number {
  const size = Math.max(1, maxPerSecond / 10);
  return Math.min(size, (tokens ?? size) + ((at - (tokensAt ?? at)) / 1000) * maxPerSecond);
}

/** One endpoint as a lease round sees it: its shared pacing row and its due deliveries. */
export interface EndpointPacing {
  id: string;
  /** The account it belongs to (absent: one account for every endpoint without one). */
  account?: string;
  /** The adaptive limit; null: the ceiling. */
  limit: number | null;
  /** Places in flight across every worker (this worker's answered attempts already deducted). */
  inFlight: number;
  pausedUntil: number | null;
  maxPerSecond: number | null;
  tokens: number | null;
  tokensAt: number | null;
  /** Due deliveries nobody leased. */
  due: number;
}

/** What a round asks for: {@link LeasePlan} (`scheduler.ts`) carries these. */
export interface RoundRequest {
  at: number;
  limit: number;
  perEndpoint: number;
  share: number;
  paused: readonly string[];
  running: ReadonlyMap<string, number>;
  /**
   * The most unanswered attempts one account may have in this worker while another account's
   * endpoints wait in the round (absent: no account share). Beyond it, an account's deliveries
   * come only after every other account's within its share: the share binds only when another
   * account has work (work-conserving).
   */
  accountShare?: number | undefined;
  /** Unanswered attempts per account in this worker, counted against `accountShare`. */
  accounts?: ReadonlyMap<string, number> | undefined;
}

/** The account key of an endpoint in a round (endpoints without one form one account). */
const accountOf = (e: EndpointPacing): string => e.account ?? '';

/** Whether the endpoint's account already runs its share in this worker. */
function atShare(e: EndpointPacing, request: RoundRequest): boolean {
  return (
    request.accountShare !== undefined && (request.accounts?.get(accountOf(e)) ?? 0) >= request.accountShare
  );
}

/**
 * The endpoints a lease round may serve: due work, not paused (by their row
 * or this worker), fewer than `share` attempts running in this worker, a token in their
 * `maxPerSecond` bucket (if they have one), room under their limit; those of accounts under
 * their `accountShare` first, then the others, each in the given order.
 *
 * @example
 * ```ts
 * roundCandidates(endpoints, request).length; // how many endpoints could be served
 * ```
 */
export function roundCandidates(
  endpoints: readonly EndpointPacing[],
  request: RoundRequest,
): EndpointPacing[] {
  const candidates = endpoints.filter(
    (e) =>
      e.due > 0 &&
      (request.running.get(e.id) ?? 0) < request.share &&
      (e.pausedUntil === null || e.pausedUntil <= request.at) &&
      !request.paused.includes(e.id) &&
      (e.maxPerSecond === null || bucketTokens(e.maxPerSecond, e.tokens, e.tokensAt, request.at) >= 1) &&
      room(e, request.perEndpoint) > 0,
  );
  // Accounts under their share first, each group in the given order (the statement's is random).
  return [...candidates].sort((a, b) => Number(atShare(a, request)) - Number(atShare(b, request)));
}

/** Places left under the endpoint's adaptive limit. */
function room(e: EndpointPacing, ceiling: number): number {
  return Math.floor(Math.min(e.limit ?? ceiling, ceiling)) - e.inFlight;
}

/**
 * What each of a round's `candidates` (at most `limit` of them) would take before the round is
 * cut at `limit`: its room, its share room, its tokens, its due deliveries and an equal part of
 * `limit` (an equal part per account with candidates, split equally among its endpoints).
 *
 * @example
 * ```ts
 * roundParts(roundCandidates(endpoints, request).slice(0, request.limit), request);
 * ```
 */
export function roundParts(
  candidates: readonly EndpointPacing[],
  request: RoundRequest,
): Map<string, number> {
  const { at, perEndpoint } = request;
  // An equal part of the round per account, then of the account's part per endpoint: an account
  // with many endpoints gets no more of a round than one with a single endpoint.
  const endpointsOf = new Map<string, number>();
  for (const e of candidates) endpointsOf.set(accountOf(e), (endpointsOf.get(accountOf(e)) ?? 0) + 1);
  const perAccount = Math.ceil(request.limit / Math.max(1, endpointsOf.size));
  const parts = new Map<string, number>();
  for (const e of candidates) {
    const each = Math.max(1, Math.ceil(perAccount / (endpointsOf.get(accountOf(e)) ?? 1)));
    const tokens =
      e.maxPerSecond === null ? each : Math.floor(bucketTokens(e.maxPerSecond, e.tokens, e.tokensAt, at));
    const shareRoom = request.share - (request.running.get(e.id) ?? 0);
    parts.set(e.id, Math.max(0, Math.min(room(e, perEndpoint), shareRoom, each, tokens, e.due)));
  }
  return parts;
}

/**
 * How many due deliveries a lease round starts per endpoint: the choice the lease statement
 * (`migrations/005_functions.sql`) makes on the pacing rows it locks, leases taken over from a dead
 * worker aside. Of the {@link roundCandidates} in the given order (the statement's is random),
 * the first `limit` are served, each its {@link roundParts} part, until `limit` deliveries are
 * taken: first what each account may take within its `accountShare`, then the rest (where the
 * statement cuts within each of the two is arbitrary; here, in order).
 *
 * @example
 * ```ts
 * const idle = { limit: null, inFlight: 0, pausedUntil: null, maxPerSecond: null, tokens: null, tokensAt: null };
 * pickRound([{ ...idle, id: 'we_1', due: 10 }, { ...idle, id: 'we_2', due: 1 }],
 *   { at: 0, limit: 8, perEndpoint: 4, share: 6, paused: [], running: new Map() });
 * // Map { 'we_1' => 4, 'we_2' => 1 }
 * ```
 */
export function pickRound(endpoints: readonly EndpointPacing[], request: RoundRequest): Map<string, number> {
  const candidates = roundCandidates(endpoints, request).slice(0, request.limit);
  const parts = roundParts(candidates, request);
  const accountOfId = new Map(candidates.map((e) => [e.id, accountOf(e)]));
  const taken = new Map<string, number>();
  const picked = new Map<string, number>();
  let left = request.limit;
  // First what each account may take within its share, then (work-conserving) the rest of the
  // parts, in the slots no account under its share wanted.
  const shareLeft = (account: string) =>
    request.accountShare === undefined
      ? Number.POSITIVE_INFINITY
      : request.accountShare - (request.accounts?.get(account) ?? 0) - (taken.get(account) ?? 0);
  for (const within of [true, false]) {
    for (const [id, part] of parts) {
      const account = accountOfId.get(id) ?? '';
      const room = part - (picked.get(id) ?? 0);
      const n = Math.min(room, left, within ? Math.max(0, shareLeft(account)) : room);
      if (n <= 0) continue;
      picked.set(id, (picked.get(id) ?? 0) + n);
      taken.set(account, (taken.get(account) ?? 0) + n);
      left -= n;
    }
  }
  return picked;
}
