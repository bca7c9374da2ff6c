import { createSigner } from '@holdfast/webhook-signer';
import type { LeasedRow } from './lease';

/** Most endpoints whose prepared signer is kept. */
const SIGNERS_MAX = 1000;

type Signer = ReturnType<typeof createSigner>;

/**
 * Each endpoint's signer, prepared once (its keys decoded) and kept while its secrets stay the
 * same: every attempt is still signed afresh, with its own timestamp. The least recently prepared
 * is dropped beyond a thousand endpoints.
 *
 * @example
 * ```ts
 * const signers = new SignerCache();
 * const signer = signers.for(row, Date.now());
 * ```
 */
export class SignerCache {
  readonly #signers = new Map<string, { secrets: string; signer: Signer }>();

  /** The signer for the row's endpoint: its secret, and the previous one while it still overlaps. */
  for(row: LeasedRow, at: number): Signer {
    const secrets = [row.secret];
    if (
      row.previous_secret &&
      row.previous_secret_expires_at &&
      row.previous_secret_expires_at.getTime() > at
    ) {
      secrets.push(row.previous_secret);
    }
    const key = secrets.join(' ');
    const cached = this.#signers.get(row.endpoint_id);
    if (cached?.secrets === key) return cached.signer;
    const signer = createSigner({ secrets });
    this.#signers.delete(row.endpoint_id);
    this.#signers.set(row.endpoint_id, { secrets: key, signer });
    if (this.#signers.size > SIGNERS_MAX) {
      const oldest = this.#signers.keys().next();
      if (!oldest.done) this.#signers.delete(oldest.value);
    }
    return signer;
  }
}
