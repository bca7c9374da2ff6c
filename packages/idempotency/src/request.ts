import { requestFingerprint } from './fingerprint';
import { parseIdempotencyKey } from './key';
import type { ResolvedIdempotencyOptions } from './options';
import { idempotencyProblems } from './problems';
import { replayResponse } from './response';
import type { ClaimInput, ClaimResult } from './store';

/** The request as the idempotency layer sees it. */
export interface IdempotentRequest {
  /** The raw `Idempotency-Key` header value; `null` or `undefined` when absent. */
  readonly key: string | null | undefined;
  /** The authenticated account: keys are scoped to it. Never take it from the request body. */
  readonly account: string;
  readonly method: string;
  /** The request path without the query. */
  readonly path: string;
  /** The parsed JSON body, `undefined` when there was none. */
  readonly body?: unknown;
  /** Answer 400 `idempotency_key_required` when the key is absent. @defaultValue false */
  readonly required?: boolean;
  /** This request's id, written into replayed problem bodies. */
  readonly requestId?: string;
}

/** A request whose key was read and fingerprinted, ready to claim. */
export type PreparedClaim = ClaimInput;

/**
 * Reads the key (throwing its 400 problem), fingerprints the request and builds the claim;
 * `undefined` when the request has no key and none is required.
 */
export async function prepareClaim(
  request: IdempotentRequest,
  options: ResolvedIdempotencyOptions,
): Promise<PreparedClaim | undefined> {
  const parsed = parseIdempotencyKey(request.key, { required: request.required ?? false });
  if (!parsed.ok) throw parsed.error;
  if (parsed.key === undefined) return undefined;
  const fingerprint = await requestFingerprint(request);
  const now = options.now();
  return {
    account: request.account,
    key: parsed.key,
    fingerprint,
    token: crypto.randomUUID(),
    now: new Date(now),
    expiresAt: new Date(now + options.retentionMs),
  };
}

/**
 * The answer when the key was not claimed: 422 `idempotency_key_reused` for a different
 * request (checked first, even while the first request still runs), 409
 * `idempotency_key_in_use` with `Retry-After` while it runs, else the replay.
 */
export function answerExisting(
  result: Exclude<ClaimResult, { outcome: 'claimed' }>,
  claim: PreparedClaim,
  options: ResolvedIdempotencyOptions,
  requestId: string | undefined,
): Response {
  if (result.fingerprint !== claim.fingerprint) {
    throw idempotencyProblems.create('idempotency_key_reused', {
      detail: 'This Idempotency-Key was already used with a different request (method, path or body).',
    });
  }
  if (result.outcome === 'running') {
    throw idempotencyProblems.create('idempotency_key_in_use', {
      detail: 'A request with this Idempotency-Key is still being processed; retry later.',
      retryAfter: options.retryAfterSeconds,
    });
  }
  return replayResponse(result.response, requestId);
}
