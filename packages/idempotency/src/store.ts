/** A response as stored for replay: allowlisted headers only, body as bytes. */
export interface StoredResponse {
  readonly status: number;
  /** Lower-case header names to values. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array | null;
}

/** What a request asks of the table when it arrives with a key. */
export interface ClaimInput {
  readonly account: string;
  readonly key: string;
  readonly fingerprint: string;
  /** A fresh random token naming this attempt. */
  readonly token: string;
  readonly now: Date;
  /** When the row may be purged if nothing completes it. */
  readonly expiresAt: Date;
}

/**
 * The answer to a claim: the caller now owns the key (`claimed`), or the key already has an
 * answer (`completed`) or an attempt in flight (`running`), each with the fingerprint of the
 * request that holds it, so the caller can answer 422 before 409.
 */
export type ClaimResult =
  | { readonly outcome: 'claimed' }
  | { readonly outcome: 'completed'; readonly fingerprint: string; readonly response: StoredResponse }
  | { readonly outcome: 'running'; readonly fingerprint: string };
