/** A response as stored for replay: allowlisted headers only, body as bytes. */
export interface StoredResponse {
  readonly status: number;
  /** Lower-case header names to values. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array | null;
}

/** What a request asks of the store when it arrives with a key. */
export interface ClaimInput {
  readonly account: string;
  readonly key: string;
  readonly fingerprint: string;
  /** A fresh random token naming this attempt; only its holder may complete or release. */
  readonly token: string;
  readonly now: Date;
  /** End of the lease: after it, an unanswered claim may be taken over. */
  readonly lockedUntil: Date;
  /** When the row may be purged if nothing completes it. */
  readonly expiresAt: Date;
}

/**
 * The store's answer to a claim: the caller now owns the key (`claimed`), or the key already
 * has an answer (`completed`) or an attempt in flight (`running`), each with the fingerprint
 * of the request that holds it, so the caller can answer 422 before 409.
 */
export type ClaimResult =
  | { readonly outcome: 'claimed' }
  | { readonly outcome: 'completed'; readonly fingerprint: string; readonly response: StoredResponse }
  | { readonly outcome: 'running'; readonly fingerprint: string; readonly lockedUntil: Date };

/** Identifies the attempt that holds a key. */
export interface HeldKey {
  readonly account: string;
  readonly key: string;
  readonly token: string;
}

/**
 * Where keys, leases and stored responses live. One interface for the in-memory store (one
 * process) and the PostgreSQL store (`@holdfast/idempotency/postgres`); the same behavioural
 * suite runs against both.
 *
 * Rules every store keeps: a claim succeeds when the key is absent, when its stored answer is
 * past `expiresAt`, or when its lease ended unanswered; `complete` and `release` act only for
 * the token that holds the key; a completed key is never released.
 *
 * @example
 * ```ts
 * const store: IdempotencyStore = memoryIdempotencyStore();
 * const result = await store.claim({ account, key, fingerprint, token, now, lockedUntil, expiresAt });
 * ```
 */
export interface IdempotencyStore {
  claim(input: ClaimInput): Promise<ClaimResult>;
  /** Stores the answer; false when the token no longer holds the key (the lease was taken over). */
  complete(held: HeldKey, response: StoredResponse, expiresAt: Date): Promise<boolean>;
  /**
   * Pushes the lease of an unanswered claim to `lockedUntil` while its handler still runs;
   * false when the token no longer holds the key.
   */
  extend(held: HeldKey, lockedUntil: Date): Promise<boolean>;
  /** Forgets an unanswered claim so the client can retry at once (5xx, crash). */
  release(held: HeldKey): Promise<void>;
  /** Deletes rows past `expiresAt` in batches; returns how many went. */
  purge(options: { now: Date; batchSize?: number }): Promise<number>;
}
