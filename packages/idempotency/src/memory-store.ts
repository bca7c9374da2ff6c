import type { ClaimInput, ClaimResult, HeldKey, IdempotencyStore, StoredResponse } from './store';

interface Entry {
  fingerprint: string;
  token: string;
  lockedUntil: Date;
  expiresAt: Date;
  response: StoredResponse | null;
}

/**
 * Keys in a `Map`: for one process (tests, a single-instance service, handlers with no
 * database). Several processes need the PostgreSQL store.
 *
 * @example
 * ```ts
 * const store = new MemoryIdempotencyStore();
 * const response = await runIdempotent(store, { key: 'k1', account: 'acct_1', method: 'POST', path: '/v1/orders', body }, () => createOrder(body));
 * ```
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #entries = new Map<string, Entry>();

  #id(account: string, key: string): string {
    return JSON.stringify([account, key]);
  }

  async claim(input: ClaimInput): Promise<ClaimResult> {
    const id = this.#id(input.account, input.key);
    const entry = this.#entries.get(id);
    const now = input.now.getTime();
    const free =
      entry === undefined ||
      entry.expiresAt.getTime() <= now ||
      (entry.response === null && entry.lockedUntil.getTime() <= now);
    if (free) {
      this.#entries.set(id, {
        fingerprint: input.fingerprint,
        token: input.token,
        lockedUntil: input.lockedUntil,
        expiresAt: input.expiresAt,
        response: null,
      });
      return { outcome: 'claimed' };
    }
    if (entry.response !== null) {
      return { outcome: 'completed', fingerprint: entry.fingerprint, response: copy(entry.response) };
    }
    return { outcome: 'running', fingerprint: entry.fingerprint, lockedUntil: entry.lockedUntil };
  }

  async complete(held: HeldKey, response: StoredResponse, expiresAt: Date): Promise<boolean> {
    const entry = this.#entries.get(this.#id(held.account, held.key));
    if (entry === undefined || entry.token !== held.token || entry.response !== null) return false;
    entry.response = copy(response);
    entry.expiresAt = expiresAt;
    return true;
  }

  async extend(held: HeldKey, lockedUntil: Date): Promise<boolean> {
    const entry = this.#entries.get(this.#id(held.account, held.key));
    if (entry === undefined || entry.token !== held.token || entry.response !== null) return false;
    entry.lockedUntil = lockedUntil;
    return true;
  }

  async release(held: HeldKey): Promise<void> {
    const id = this.#id(held.account, held.key);
    const entry = this.#entries.get(id);
    if (entry !== undefined && entry.token === held.token && entry.response === null)
      this.#entries.delete(id);
  }

  async purge(options: { now: Date; batchSize?: number }): Promise<number> {
    let deleted = 0;
    for (const [id, entry] of this.#entries) {
      if (entry.expiresAt.getTime() <= options.now.getTime()) {
        this.#entries.delete(id);
        deleted += 1;
      }
    }
    return deleted;
  }
}

function copy(response: StoredResponse): StoredResponse {
  return {
    status: response.status,
    headers: { ...response.headers },
    body: response.body === null ? null : response.body.slice(),
  };
}
